"""The criterion x judge table as LaTeX (booktabs) that fits a two-column paper at a readable size.

Three layouts, all at ``\\footnotesize`` with each interval on a line under its value (an interval
beside its value doubles a column's width) and one heading row per criterion:

- ``full``: every column, across both columns of the page (``table*``);
- ``narrow``: judge, Spearman ρ, Cohen κ, the p-values against the best judge and the alt-test,
  in one column (``table``);
- ``resize``: every column in one column of the page, split into two tables (agreement; then
  classification and tests) rather than shrunk: 13 columns scaled to ``\\columnwidth`` came out
  at about 3 pt.

Judge names longer than ``LONG_JUDGE_NAME`` characters (``model:llama-3.1-8b-instruct[chat]``)
would widen the first column past a page column in every layout, so then every judge is written
J1, J2, ... in order of appearance, and the caption under the table gives each name, with break
points after ``: - / . _ [`` so that a long name wraps rather than overflows.

Each tabular is shrunk to its width only when wider, and never below 7/8 of its size (7 pt in a
10 pt paper): past that the table is left at full size and LaTeX reports an overfull box, which
names the problem (usually a very long judge name) instead of printing it unreadably small.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from convoscope.analysis._export import DAGGER, DOUBLE_DAGGER, Layout, _number, _p, legend
from convoscope.analysis._multitest import Correction

_LATEX_SPECIALS = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                   "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
                   "†": r"\textsuperscript{\dag}", "‡": r"\textsuperscript{\ddag}", "ρ": r"$\rho$",
                   "τ": r"$\tau$", "κ": r"$\kappa$", "α": r"$\alpha$", "ω": r"$\omega$", "−": "$-$",
                   "–": "--", "·": r"$\cdot$", "<": r"\textless{}", ">": r"\textgreater{}",
                   "≥": r"$\geq$", "✓": r"$\checkmark$"}
# (heading, symbol line, how the cell is drawn): "interval" puts the interval under the value.
_COLUMNS: dict[str, tuple[str, str, str, str]] = {
    "spearman": ("Spearman", "ρ", "interval", "ρ"), "kendall": ("Kendall", "τ", "interval", "τ"),
    "pearson": ("Pearson", "r", "interval", "r"), "kappa": ("Cohen", "κ", "interval", "κ"),
    "f1_pos": ("F1", "+", "number", "F1+"), "f1_neg": ("F1", "−", "number", "F1−"),
    "accuracy": ("acc.", "", "number", "acc."), "auc": ("AUC", "", "number", "AUC"),
    "versus": ("p vs best", "W / perm.", "versus", "p"), "alt": ("alt-test", "ω", "alt", "ω"),
}
_PARTS: dict[str, list[tuple[str, ...]]] = {
    "full": [("spearman", "kendall", "pearson", "kappa", "f1_pos", "f1_neg", "accuracy", "auc", "versus",
              "alt")],
    "narrow": [("spearman", "kappa", "versus", "alt")],
    "resize": [("spearman", "kendall", "pearson", "kappa"),
               ("f1_pos", "f1_neg", "accuracy", "auc", "versus", "alt")],
}


LONG_JUDGE_NAME = 18  # characters; the longest tested to fit every layout unabbreviated (20 did not)
_BREAK_AFTER = frozenset(":-/._[")


def judge_keys(judges: Sequence[str]) -> dict[str, str]:
    """``{name: "J1", ...}`` in order of appearance when any name is longer than
    ``LONG_JUDGE_NAME``, else ``{}`` (the names are short enough to print as they are)."""
    names = list(dict.fromkeys(judges))
    if all(len(name) <= LONG_JUDGE_NAME for name in names):
        return {}
    return {name: f"J{number}" for number, name in enumerate(names, start=1)}


def judge_legend(keys: dict[str, str]) -> str:
    """The caption's key to the abbreviations (LaTeX), each name breakable after ``: - / . _ [``."""
    def breakable(name: str) -> str:
        return "".join(latex_escape(char) + (r"\allowbreak{}" if char in _BREAK_AFTER else "")
                       for char in name)
    return " Judges: " + "; ".join(f"{short} = {breakable(name)}" for name, short in keys.items()) + "."


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell.

    >>> latex_escape("model:gpt_4 & co")
    'model:gpt\\\\_4 \\\\& co'
    """
    return "".join(_LATEX_SPECIALS.get(char, char) for char in text)


def fit_to_width(tabular: list[str], width: str) -> list[str]:
    """``tabular`` shrunk to ``width`` only when wider, and at most to 7/8 of its size (plain LaTeX
    plus graphicx; box 0 is TeX's scratch box, local to the float's group)."""
    return [r"\sbox0{%", *tabular, "}%", rf"\ifdim\wd0>{width}%",
            rf"\ifdim\dimexpr\wd0*7/8\relax>{width}\usebox0% too wide even at 7/8: LaTeX says overfull",
            rf"\else\resizebox{{{width}}}{{!}}{{\usebox0}}\fi", r"\else\usebox0\fi"]


def _cell(record: dict[str, Any], key: str, digits: int) -> tuple[str, str]:
    """(value line, line under it) of one cell, as plain text."""
    mark = record["mark"]
    kind = _COLUMNS[key][2]
    if kind == "interval":
        if record[key] is None:
            return "–", ""
        value = f"{record[key]:.{digits}f}" + (DAGGER if key == "spearman" and DAGGER in mark else "")
        if record[key + "_low"] is None:
            return value, ""
        return value, f"[{_short(record[key + '_low'])}, {_short(record[key + '_high'])}]"
    if kind == "number":
        text = _number(record[key], digits) or "–"
        marked = key == "accuracy" and DOUBLE_DAGGER in mark and text != "–"
        return text + (DOUBLE_DAGGER if marked else ""), ""
    if kind == "versus":
        williams, permuted = record.get("williams_p_adjusted"), record.get("permutation_p_adjusted")
        return ("–", "") if williams is None and permuted is None else (_p(williams), _p(permuted))
    if record.get("alt_winning_rate") is None:
        return "–", ""
    return f"{record['alt_winning_rate']:.2f}" + {True: " ✓", False: "", None: " ?"}[record["alt_passed"]], ""


def _short(value: float) -> str:
    """Two decimals without the leading zero (``−.12``, ``.90``, ``1.00``): the interval line."""
    text = f"{abs(value):.2f}"
    return ("−" if value < 0 else "") + (text[1:] if text.startswith("0") else text)


def _part(records: Sequence[dict[str, Any]], keys: tuple[str, ...], digits: int, *, wide: bool,
          judges: dict[str, str]) -> list[str]:
    """One tabular: a heading row per criterion, per judge its values and the line under them
    (the judge's n under its name). ``wide``: two heading lines of words, else one of symbols;
    ``judges``: short names to print instead of the long ones."""
    heads = [["judge", *(_COLUMNS[k][0] for k in keys)], ["", *(_COLUMNS[k][1] for k in keys)]] if wide \
        else [["judge", *(_COLUMNS[k][3] for k in keys)]]
    rows = [" & ".join(latex_escape(text) for text in head) + r" \\" for head in heads] + [r"\midrule"]
    heading = None
    for record in records:
        name = record["criterion"] + (f" · {record['group']}" if record["group"] else "")
        if name != heading:
            rows += ([r"\addlinespace"] if heading is not None else [])
            rows.append(rf"\multicolumn{{{len(keys) + 1}}}{{@{{}}l}}{{\emph{{{latex_escape(name)}}}}} \\")
            heading = name
        cells = [_cell(record, key, digits) for key in keys]
        for first, line in ((judges.get(record["judge"], record["judge"]), 0), (f"n = {record['n']}", 1)):
            rows.append(" & ".join([latex_escape(first), *(latex_escape(c[line]) for c in cells)]) + r" \\")
    return [rf"\begin{{tabular}}{{@{{}}l{'r' * len(keys)}@{{}}}}", r"\toprule", *rows, r"\bottomrule",
            r"\end{tabular}"]


def _latex_legend(alpha: float, correction: Correction) -> str:
    """The legend for a caption: text escaped, ``p < alpha`` in math mode."""
    text = latex_escape(legend(alpha, correction).replace(f"p < {alpha:g}", "\x00"))
    return text.replace("\x00", fr"$p < {alpha:g}$")


def to_latex(records: Sequence[dict[str, Any]], *, digits: int = 3, caption: str | None = None,
             alpha: float = 0.05, correction: Correction = "holm", layout: Layout = "resize") -> str:
    """The table as LaTeX in ``layout`` (see the module). Needs ``\\usepackage{booktabs,graphicx}``
    (graphicx only for a table wider than its column) and ``amssymb`` for the checkmark."""
    under = ("Under each judge: the items it shares with people; under each correlation and κ: its "
             "interval; p: Williams' test, under it the permutation test. ")
    text = latex_escape(caption) if caption else latex_escape(under) + _latex_legend(alpha, correction)
    judges = judge_keys([record["judge"] for record in records])
    text += judge_legend(judges) if judges else ""
    environment, width = ("table*", r"\textwidth") if layout == "full" else ("table", r"\columnwidth")
    parts = _PARTS[layout]
    lines = [r"% needs \usepackage{booktabs,graphicx,amssymb}"]
    for number, keys in enumerate(parts, start=1):
        if number > 1:
            text = latex_escape(f"The table above, continued (part {number} of {len(parts)}; "
                                "legend as there).")
        # one column of the page: two decimals (the CSV keeps every digit)
        places = digits if layout == "full" else min(digits, 2)
        tabular = _part(records, keys, places, wide=layout == "full", judges=judges)
        lines += [rf"\begin{{{environment}}}[t]", r"\centering", r"\footnotesize",
                  rf"\setlength{{\tabcolsep}}{{{4 if layout == 'full' else 3}pt}}",
                  *fit_to_width(tabular, width),
                  r"\caption{" + text + "}", rf"\end{{{environment}}}"]
    return "\n".join(lines) + "\n"
