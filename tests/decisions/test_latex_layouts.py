"""Issue 36, observation 7: the LaTeX tables fit a two-column paper at a readable size.

Each layout is compiled with pdflatex inside two pages: ``article`` in ``twocolumn`` at 10 pt (its
own widths) and an ACL-like page at 11 pt (text 16 cm, column 7.7 cm, set explicitly). The test
fails on any ``Overfull \\hbox`` and when the smallest font in the table, after any scaling by
``\\resizebox``, is below 7 pt. The scaling is read from a ``\\resizebox`` that logs its natural
and target widths, and the font sizes from LaTeX's ``selectfont`` hook; both leave the
document's own commands, so the table is typeset exactly as a paper would typeset it. The marks
(``\\textsuperscript{\\dag}``) are left out of the font check: a superscript is smaller in any paper.
"""

import re
import shutil
import subprocess

import numpy as np
import pytest

from convoscope.analysis import Rating, latex_escape, metaeval_study, to_latex
from convoscope.analysis._export_latex import LONG_JUDGE_NAME

READABLE_PT = 6.95  # \scriptsize of a 10 pt article is 7 pt; anything smaller is a shrunk table
PAGES = {
    "article-10pt": r"\documentclass[twocolumn,10pt]{article}",
    "acl-like-11pt": (r"\documentclass[twocolumn,11pt]{article}" "\n"
                      r"\setlength{\textwidth}{16cm}\setlength{\columnsep}{0.6cm}"
                      r"\setlength{\columnwidth}{7.7cm}\setlength{\oddsidemargin}{0cm}"),
}
# Logs every font size chosen between the markers and each \resizebox's natural and target width.
_PROBES = r"""\makeatletter
\newif\ifcvsprobe
\AddToHook{selectfont}{\ifcvsprobe\typeout{CVS-FONT=\f@size}\fi}
\let\cvs@superscript\@textsuperscript
\def\@textsuperscript#1{{\cvsprobefalse\cvs@superscript{#1}}}
\let\cvs@resizebox\resizebox
\renewcommand{\resizebox}[3]{\sbox\@tempboxa{#3}\setlength\@tempdima{#1}%
  \typeout{CVS-SCALE=\the\@tempdima/\the\wd\@tempboxa}\cvs@resizebox{#1}{#2}{\usebox\@tempboxa}}
\makeatother
"""


JUDGES = ("model:gpt_4o-mini", "model:llama-3.1-8b")
# Observed overflowing a column: names as serving tools and leaderboards write them.
LONG_JUDGES = ("model:llama-3.1-8b-instruct[chat]", "model:qwen2.5-72b-instruct-awq[int4]")


def _rows(judges=JUDGES):
    """Two criteria (one 1-5, one binary) with three people and two judges, names with specials."""
    rng = np.random.default_rng(0)
    rows = []
    for s in range(6):
        quality = rng.normal()
        for i in range(10):
            truth = quality + rng.normal(0, 0.7)
            item = f"s{s}:{i}"
            for rater, noise in (("human:h0", .5), ("human:h1", .5), ("human:h2", .5),
                                 (judges[0], .6), (judges[1], 1.5)):
                value = truth + rng.normal(0, noise)
                rows.append(Rating(item, "overall_quality & more", rater,
                                   float(np.clip(np.round(3 + value), 1, 5)), system=f"s{s}"))
                rows.append(Rating(item, "engaging", rater, float(value > 0), system=f"s{s}"))
    return rows


@pytest.fixture(scope="module")
def study():
    return metaeval_study(_rows(), n_resamples=60, permutations=60, system=True)


@pytest.fixture(scope="module")
def long_names_study():
    return metaeval_study(_rows(LONG_JUDGES), n_resamples=20, permutations=20, system=True)


def _breakable(name: str) -> str:
    """``name`` as the legend writes it: escaped, with a break point after ``: - . [``."""
    return "".join(latex_escape(c) + (r"\allowbreak{}" if c in ":-.[" else "") for c in name)


def _compile(tmp_path, page: str, table: str) -> tuple[str, float, list[float]]:
    """(log, smallest scale factor, font sizes used in the table) after compiling ``table``."""
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (Debian: texlive-latex-base texlive-latex-recommended); "
                    "the layouts' fit is only checked by typesetting them")
    (tmp_path / "table.tex").write_text(table, encoding="utf-8")
    (tmp_path / "paper.tex").write_text(
        PAGES[page] + "\n\\usepackage{booktabs,graphicx,amssymb,tabularx}\n" + _PROBES
        + "\\begin{document}\n\\typeout{CVS-COLUMN=\\the\\columnwidth/\\the\\textwidth}\n"
        "Text before.\n\n\\cvsprobetrue\\input{table.tex}\\cvsprobefalse\n\nText after.\n\\end{document}\n",
        encoding="utf-8")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    log = (tmp_path / "paper.log").read_text(encoding="latin-1")
    assert done.returncode == 0, log[-3000:]
    scales = [float(a) / float(b) for a, b in re.findall(r"CVS-SCALE=([\d.]+)pt/([\d.]+)pt", log)]
    fonts = [float(size) for size in re.findall(r"CVS-FONT=([\d.]+)", log)]
    return log, min([1.0, *scales]), fonts


def _assert_fits(tmp_path, page: str, table: str) -> None:
    log, scale, fonts = _compile(tmp_path, page, table)
    if page == "acl-like-11pt":
        assert "CVS-COLUMN=218.98" in log or "CVS-COLUMN=219" in log, re.findall(r"CVS-COLUMN=\S+", log)
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)
    assert fonts, "no font size was logged inside the table"
    smallest = min(fonts) * scale
    assert smallest >= READABLE_PT, f"smallest font {min(fonts)} pt x scale {scale:.3f} = {smallest:.2f} pt"


@pytest.mark.parametrize("page", sorted(PAGES))
@pytest.mark.parametrize("layout", ["full", "narrow", "resize"])
def test_each_latex_layout_fits_a_two_column_page_at_a_readable_size(tmp_path, study, layout, page):
    _assert_fits(tmp_path, page, study.table(".tex", layout=layout))


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_system_level_latex_table_fits_a_two_column_page_at_a_readable_size(tmp_path, study, page):
    study.write_table(tmp_path / "t.tex", layout="full")
    _assert_fits(tmp_path, page, (tmp_path / "t-systems.tex").read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", sorted(PAGES))
@pytest.mark.parametrize("layout", ["full", "narrow", "resize"])
def test_long_judge_names_are_abbreviated_so_each_layout_still_fits(tmp_path, long_names_study, layout, page):
    table = long_names_study.table(".tex", layout=layout)
    _assert_fits(tmp_path, page, table)
    for number, name in enumerate(LONG_JUDGES, start=1):  # J1, J2 in the table, the names in the legend
        assert f"J{number} & " in table and f"J{number} = {_breakable(name)}" in table


def test_the_system_level_table_abbreviates_long_judge_names_and_fits(tmp_path, long_names_study):
    long_names_study.write_table(tmp_path / "t.tex", layout="full")
    _assert_fits(tmp_path, "acl-like-11pt", (tmp_path / "t-systems.tex").read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", sorted(PAGES))
@pytest.mark.parametrize("layout", ["full", "narrow", "resize"])
def test_names_at_the_abbreviation_limit_are_printed_whole_and_still_fit(tmp_path, study, layout, page):
    limit = {"model:gpt_4o-mini": "model:granite-3-8b", "model:llama-3.1-8b": "model:phi-3.5-mini"}
    assert {len(name) for name in limit.values()} == {LONG_JUDGE_NAME}
    table = to_latex([{**record, "judge": limit.get(record["judge"], record["judge"])}
                      for record in study.records()], layout=layout)
    _assert_fits(tmp_path, page, table)
    assert "granite-3-8b & " in table and "Judges:" not in table
