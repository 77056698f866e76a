"""``convoscope route``, ``calibrate`` and ``estimate``: judges and people together."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from convoscope.cli._common import fail_on

_VERDICTS = click.argument("verdict_paths", metavar="VERDICTS...", nargs=-1, required=True,
                           type=click.Path(exists=True, dir_okay=False, path_type=Path))


def _read(paths: tuple[Path, ...]) -> list[Any]:
    from convoscope.judges import read_verdicts

    return [verdict for path in paths for verdict in read_verdicts(path)]


def _interval(low: float, high: float) -> str:
    return f"[{low:.3f}, {high:.3f}]"


ROUTE_EXAMPLE = """
\b
Examples:
  convoscope route verdicts.jsonl --random 100 --out for-people.jsonl
  convoscope route survey-verdicts.jsonl --value hold --random 50 --out for-people.jsonl
  convoscope route verdicts.jsonl --random 40 --budget 100 --out for-people.jsonl
"""


@click.command("route", epilog=ROUTE_EXAMPLE)
@_VERDICTS
@click.option("--random", "random_size", type=click.IntRange(min=0), required=True,
              help="Size of the uniform random sample of all items (what makes estimates unbiased).")
@click.option("--criterion", help="Only verdicts on this criterion.")
@click.option("--value", "values", multiple=True, help="Select items with a verdict of this value "
              "(e.g. hold). Repeatable.")
@click.option("--flat-above", type=click.FloatRange(0, 1), default=0.8, show_default=True,
              help="Select items where a judge's score distribution is flatter than this "
                   "(normalised entropy).")
@click.option("--no-disagreement", is_flag=True, help="Do not select items where judges disagree.")
@click.option("--budget", type=click.IntRange(min=0), help="At most this many items in all: the random "
              "sample, then the items with the most reasons (flattest distribution first). Default: no cap.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="JSONL of the chosen items: item_id and the reasons it was chosen.")
@click.option("--items", "items_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The judged items: with --write-items, the chosen ones are written out whole.")
@click.option("--write-items", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the chosen items (meta.selected_because, meta.random_sample) as JSONL, "
                   "ready to append to a campaign's items file.")
def route_command(verdict_paths: tuple[Path, ...], random_size: int, criterion: str | None,
                  values: tuple[str, ...], flat_above: float, no_disagreement: bool, budget: int | None,
                  seed: int, out: Path, items_path: Path | None, write_items: Path | None) -> None:
    """Choose the items of a judged run that people should rate, and say why.

    Items where judges disagree, where a judge's distribution is flat, or with a chosen value
    (a survey "hold"), always together with a uniform random sample: pass this file to
    `convoscope estimate --random-sample` once people have rated the items.
    """
    from convoscope.estimate import select_items

    console = Console(stderr=True)
    with fail_on(console):
        chosen = select_items(_read(verdict_paths), criterion=criterion, random=random_size,
                              disagreement=not no_disagreement, flat_above=flat_above,
                              values=values, seed=seed, budget=budget)
        with out.open("w", encoding="utf-8") as handle:
            for selected in chosen:
                handle.write(json.dumps({"item_id": selected.item_id,
                                         "reasons": list(selected.reasons)}, ensure_ascii=False) + "\n")
        random_count = sum(s.in_random_sample for s in chosen)
        console.print(f"Wrote {out}: {len(chosen)} items ({random_count} in the random sample, "
                      f"{len(chosen) - random_count} chosen only for a reason)")
        if write_items is not None:
            if items_path is None:
                raise click.UsageError("--write-items needs --items (the judged items)")
            from convoscope.estimate import selected_items
            from convoscope.items import read_items, write_jsonl

            written = write_jsonl(selected_items(read_items(items_path), chosen), write_items)
            console.print(f"Wrote {write_items}: {written} items with their reasons in meta")


def _random_sample(path: Path | None) -> set[str] | None:
    """Item ids of the random sample: a `route` output (reason `random`), items written by
    `route --write-items` (meta.random_sample), or one id per line."""
    if path is None:
        return None
    from convoscope.errors import LocatedError

    ids: set[str] = set()
    for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = line.strip()
        if not text:
            continue
        if not text.startswith("{"):
            ids.add(text)
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as error:
            raise LocatedError(path, f"not JSON: {error.msg}", line=line_number) from None
        if "item_id" in row:  # a `route` output line
            if "random" in row.get("reasons", ["random"]):
                ids.add(str(row["item_id"]))
        elif "id" in row:  # an item written by `route --write-items`
            if (row.get("meta") or {}).get("random_sample"):
                ids.add(str(row["id"]))
        else:
            raise LocatedError(path, "neither item_id (a route output) nor id (an item)", line=line_number)
    return ids


CALIBRATE_EXAMPLE = """
\b
Examples:
  convoscope calibrate verdicts.jsonl humans.jsonl --criterion overall \\
      --judge "model:openai:gpt-4o-mini[chat]" --levels 1-5 --exclude for-people.jsonl \\
      --out calibration.json
"""


def _levels(text: str | None) -> list[float] | None:
    if not text:
        return None
    low, _, high = text.partition("-")
    if not high:
        return [float(part) for part in text.split(",")]
    return [float(level) for level in range(int(low), int(high) + 1)]


@click.command("calibrate", epilog=CALIBRATE_EXAMPLE)
@_VERDICTS
@click.option("--criterion", required=True)
@click.option("--judge", "judge_rater", required=True, help="The judge's rater name in the verdicts.")
@click.option("--levels", help="The human scale, e.g. 0-4 or 1,2,3: adds QWK and accuracy.")
@click.option("--score", type=click.Choice(["value", "expected_value"]), default="expected_value",
              show_default=True, help="The judge's score to map (expected_value falls back to value).")
@click.option("--folds", type=click.IntRange(min=2), default=5, show_default=True)
@click.option("--exclude", "exclude_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Leave these items out of the fit (a `route` output: its random sample), so "
                   "`estimate` may use their labels. The items fitted on are saved with the map.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to save the calibration (JSON), for `convoscope estimate --calibration`.")
@click.option("--write-calibrated", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the judge's verdicts mapped through the calibration (JSONL), as "
                   "rater '<judge>|calibrated:<name>'.")
def calibrate_command(verdict_paths: tuple[Path, ...], criterion: str, judge_rater: str,
                      levels: str | None, score: str, folds: int, exclude_path: Path | None, out: Path,
                      write_calibrated: Path | None) -> None:
    """Learn a monotone map from a judge's scores to the human scale, on items both rated.

    Agreement with people before and after is measured out of fold (Spearman, and with
    --levels quadratic-weighted kappa and accuracy), overall and per language.
    """
    from convoscope.estimate import apply_calibration, calibration_pairs, cross_validate, fit_isotonic

    console = Console()
    with fail_on(console):
        verdicts = _read(verdict_paths)
        excluded = _random_sample(exclude_path) or set()
        pairs = calibration_pairs([v for v in verdicts if v.item_id not in excluded], criterion=criterion,
                                  judge=judge_rater, score=score)
        scale = _levels(levels)
        report = cross_validate(pairs.judge, pairs.human, folds=folds, levels=scale, groups=pairs.language)
        bounds = (min(scale), max(scale)) if scale else None
        calibration = fit_isotonic(pairs.judge, pairs.human, scale=bounds, item_ids=pairs.item_ids,
                                   name=f"isotonic:{judge_rater}->{criterion}")
        out.write_text(json.dumps(calibration.to_dict(), indent=2, ensure_ascii=False) + "\n",
                       encoding="utf-8")
        from convoscope.cli._analysis import wrapped_table

        table = wrapped_table(f"{criterion}: {judge_rater}, {report.n} items, {report.folds}-fold",
                              ["group", "when", "Spearman", "QWK", "accuracy"], keys=2)
        rows = [("all", report.before, report.after),
                *((name, before, after) for name, (before, after) in report.groups.items())]
        for group, before, after in rows:
            for when, scores in (("before", before), ("after", after)):
                table.add_row(Text(group), when, *(("–" if v is None else f"{v:.3f}")
                                             for v in (scores.spearman, scores.qwk, scores.accuracy)))
        console.print(table)
        console.print(f"Wrote {out}")
        if write_calibrated:
            mapped = apply_calibration([v for v in verdicts if v.criterion == criterion], calibration,
                                       judge=judge_rater, levels=scale, score=score)
            write_calibrated.write_text("".join(v.model_dump_json() + "\n" for v in mapped), encoding="utf-8")
            console.print(Text(f"Wrote {write_calibrated} ({len(mapped)} verdicts, rater {mapped[0].rater})"))


ESTIMATE_EXAMPLE = """
\b
Examples:
  convoscope estimate verdicts.jsonl humans.jsonl --criterion overall \\
      --judge "model:embedded:smollm2[completion]"
  convoscope estimate verdicts.jsonl humans.jsonl --criterion overall --judge J \\
      --random-sample for-people.jsonl --calibration calibration.json \\
      --by system,language --out estimates.csv
  convoscope estimate verdicts.jsonl humans.jsonl --criterion overall --judge J \\
      --cross-fit 5 --difference bot-a bot-b
"""


_EXISTING = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command("estimate", epilog=ESTIMATE_EXAMPLE)
@_VERDICTS
@click.option("--criterion", required=True)
@click.option("--judge", "judge_rater", required=True, help="The judge's rater name in the verdicts.")
@click.option("--target", type=click.Choice(["mean", "shares"]),
              help="The mean human score, or the share of each label. Default: shares for text "
                   "labels, else the mean (for 0/1 labels with the share interval).")
@click.option("--by", default="system", show_default=True,
              help="Group by system, language or both (system,language).")
@click.option("--random-sample", "sample_path", type=_EXISTING,
              help="Which human-rated items are the uniform random sample (a `route` output).")
@click.option("--calibration", "calibration_path", type=_EXISTING,
              help="Map the judge's scores through this calibration first (it must not have been "
                   "fitted on the labelled items: `calibrate --exclude`).")
@click.option("--cross-fit", "folds", type=click.IntRange(min=2),
              help="Calibrate the judge isotonically on the same labels, out of fold, in this many "
                   "folds (cross-prediction-powered inference).")
@click.option("--score", type=click.Choice(["value", "expected_value"]), default="expected_value",
              show_default=True)
@click.option("--interval", type=click.Choice(["t", "normal"]), default="t", show_default=True,
              help="t: Student t on n-1 degrees of freedom (covers with few labels); normal: the "
                   "papers' and ppi-python's CLT interval.")
@click.option("--min-labels", type=click.IntRange(min=2), default=10, show_default=True,
              help="Groups with fewer labelled items are not estimated.")
@click.option("--confidence", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True)
@click.option("--difference", nargs=2, metavar="A B",
              help="Also estimate system A minus system B (independent samples).")
@click.option("--wide", is_flag=True, help="Print tables at full width instead of wrapping cells.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Also write a CSV.")
def estimate_command(verdict_paths: tuple[Path, ...], criterion: str, judge_rater: str, target: str | None,
                     by: str, sample_path: Path | None, calibration_path: Path | None, folds: int | None,
                     score: str, interval: str, min_labels: int, confidence: float,
                     difference: tuple[str, str] | None, wide: bool, out: Path | None) -> None:
    """What people would say, from a few human labels and many judged items, with honest intervals.

    Prediction-powered inference (PPI++): the judge's mean over all items, corrected by how it
    differs from people on the items both rated. Beside it, the estimate from the human labels
    alone and how many human labels the judge was worth. The human-rated items must be a
    uniform random sample; name it with --random-sample when people also rated routed items.
    """
    from convoscope.cli._analysis import console_for, wrapped_table
    from convoscope.estimate import Calibration, estimate

    console = console_for(wide)
    with fail_on(console):
        groups = tuple(part.strip() for part in by.split(",") if part.strip())
        calibration = (Calibration.from_dict(json.loads(calibration_path.read_text(encoding="utf-8")))
                       if calibration_path else None)
        results = estimate(_read(verdict_paths), criterion=criterion, judge=judge_rater,
                           target=target,  # type: ignore[arg-type]
                           by=groups, random_sample=_random_sample(sample_path),  # type: ignore[arg-type]
                           calibration=calibration, cross_fit=folds, score=score, confidence=confidence,
                           interval=interval, min_labels=min_labels)  # type: ignore[arg-type]
        differences = _differences(results, difference) if difference else []
        rows = [_estimate_row(result) for result in results]
        what = target or ("shares" if rows and rows[0]["target"].startswith("share:") else "mean")
        table = wrapped_table(f"{criterion}: people's {what} estimated with {judge_rater}",
                              ["group", "target", "PPI [CI]", "people only [CI]", "n people", "n judge",
                               "labels worth"], keys=2)
        for row in rows:
            ppi = f"{row['estimate']:.3f} {_interval(row['ci_low'], row['ci_high'])}"
            human = f"{row['human_only']:.3f} {_interval(row['human_only_low'], row['human_only_high'])}"
            table.add_row(Text(row["group"]), Text(row["target"]), ppi, human, str(row["n_human"]),
                          str(row["n_judged"]), _worth(row["effective_n"]))
        console.print(table)
        if differences:
            console.print(_difference_table(differences))
        _estimate_notes(console, results, calibration, interval, confidence)
        if out:
            with out.open("w", encoding="utf-8", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
            console.print(f"Wrote {out}")


def _worth(effective_n: float) -> str:
    """Labels worth, or a dash when the variance it is a ratio of is zero (not a number)."""
    return f"{effective_n:.0f}" if math.isfinite(effective_n) else "–"


def _estimate_notes(console: Console, results: Any, calibration: Any, interval: str,
                    confidence: float) -> None:
    for note in results.skipped:
        console.print(Text(f"Not estimated: {note}"))
    for result in results:
        for warning in result.estimate.warnings:
            group = ",".join(f"{k}={v}" for k, v in result.group.items()) or "all"
            console.print(Text(f"Warning ({group}, {result.target}): {warning}"))
    if results and results[0].labelled == "all human-rated items":
        console.print("Every human-rated item was taken as the random sample; pass --random-sample "
                      "if people also rated items chosen for a reason.")
    if results and results[0].calibration:
        console.print(Text(f"Judge scores mapped through {results[0].calibration}."))
    kind = "Student t, n-1 degrees of freedom" if interval == "t" else "normal (CLT)"
    console.print(f"{confidence:.0%} intervals: {kind}; shares clipped to [0, 1].")


def _differences(results: Any, pair: tuple[str, str]) -> list[tuple[str, str, Any]]:
    """(group, target, Difference) for system A minus system B, matching the other groupings."""
    from convoscope.errors import ConfigError
    from convoscope.estimate import ppi_difference

    if "system" not in results[0].group:
        raise ConfigError("--difference compares systems: group by system (--by system)")
    systems = sorted({str(r.group["system"]) for r in results})
    for name in pair:
        if name not in systems:
            raise ConfigError(f"--difference: no estimate for system {name!r}; estimated systems: "
                              f"{', '.join(systems)}")
    first, second = pair

    def rest(result: Any) -> tuple[Any, ...]:
        return (result.target, *((k, v) for k, v in result.group.items() if k != "system"))

    others = {rest(r): r for r in results if str(r.group["system"]) == second}
    found = []
    for result in results:
        match = others.get(rest(result))
        if str(result.group["system"]) == first and match is not None:
            extra = ",".join(f"{k}={v}" for k, v in result.group.items() if k != "system")
            label = f"{first} − {second}" + (f" ({extra})" if extra else "")
            found.append((label, result.target, ppi_difference(result.estimate, match.estimate)))
    return found


def _difference_table(differences: list[tuple[str, str, Any]]) -> Table:
    from convoscope.cli._analysis import wrapped_table

    table = wrapped_table("Differences between systems", ["systems", "target", "PPI [CI]",
                                                           "people only [CI]"], keys=2)
    for label, target, found in differences:
        low, high = found.human_only_ci
        table.add_row(Text(label), Text(target),
                      f"{found.value:+.3f} [{found.ci[0]:+.3f}, {found.ci[1]:+.3f}]",
                      f"{found.human_only:+.3f} [{low:+.3f}, {high:+.3f}]")
    return table


def _text_cell(text: str) -> str:
    """A CSV cell a spreadsheet will not run (the campaigns' export rule)."""
    from convoscope.campaigns import spreadsheet_safe

    return str(spreadsheet_safe(text))


def _estimate_row(result: Any) -> dict[str, Any]:
    value = result.estimate
    return {"criterion": _text_cell(result.criterion), "judge": _text_cell(result.judge),
            "group": _text_cell(",".join(f"{k}={v}" for k, v in result.group.items()) or "all"),
            "target": _text_cell(result.target), "estimate": value.value,
            "ci_low": value.ci[0], "ci_high": value.ci[1],
            "human_only": value.human_only, "human_only_low": value.human_only_ci[0],
            "human_only_high": value.human_only_ci[1], "n_human": value.n_human,
            "n_judged": value.n_judged, "lambda": value.lam, "effective_n": value.effective_n,
            "confidence": value.confidence, "interval": value.interval, "labelled": result.labelled,
            "calibration": result.calibration or ""}


BIAS_EXAMPLE = """
\b
Examples:
  convoscope bias verdicts.jsonl humans.jsonl --criterion overall --judge J --items items.jsonl
  convoscope bias verdicts.jsonl humans.jsonl --criterion overall --judge J --own-family gpt-bot
"""


@click.command("bias", epilog=BIAS_EXAMPLE)
@_VERDICTS
@click.option("--criterion", required=True)
@click.option("--judge", "judge_rater", required=True, help="The judge's rater name in the verdicts.")
@click.option("--items", "items_path", type=_EXISTING, help="The judged items: adds length bias.")
@click.option("--own-family", multiple=True, help="A system built on the judge's own model family "
              "(measures self-preference). Repeatable.")
@click.option("--score", type=click.Choice(["value", "expected_value"]), default="expected_value",
              show_default=True)
def bias_command(verdict_paths: tuple[Path, ...], criterion: str, judge_rater: str,
                 items_path: Path | None, own_family: tuple[str, ...], score: str) -> None:
    """How a judge leans against people: length, language gaps, self-preference.

    Residuals are the judge's score minus the people's mean, both standardised, on the items
    both rated: a fair judge's residuals do not grow with length, average zero in every
    language and do not favour its own model family.
    """
    from convoscope.baselines import item_length
    from convoscope.estimate import bias_diagnostics
    from convoscope.items import read_items

    console = Console()
    with fail_on(console):
        lengths = ({item.id: item_length(item) for item in read_items(items_path)}
                   if items_path else None)
        report = bias_diagnostics(_read(verdict_paths), criterion=criterion, judge=judge_rater,
                                  lengths=lengths, own_family=own_family, score=score)
        console.print(Text(f"{criterion}: {judge_rater} against people on {report.n} items"))
        if report.length:
            length = report.length
            console.print(f"  length: Spearman(residual, words) {length.rho:+.3f} (p {length.pvalue:.3g}), "
                          f"{length.slope_per_10_words:+.3f} SD per 10 words, n {length.n}")
        for language, gap in report.languages.items():
            p = "–" if gap.pvalue is None else f"{gap.pvalue:.3g}"
            console.print(f"  language {language}: mean residual {gap.mean_residual:+.3f} SD "
                          f"(p {p}), n {gap.n}")
        if report.self_preference:
            gap = report.self_preference
            p = "–" if gap.pvalue is None else f"{gap.pvalue:.3g}"
            console.print(f"  self-preference: own family minus others {gap.mean_residual:+.3f} SD "
                          f"(Welch p {p}), n {gap.n}")
        for note in report.notes:
            console.print(f"  note: {note}")


COMMANDS = [route_command, calibrate_command, estimate_command, bias_command]
