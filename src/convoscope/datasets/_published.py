"""Published figures of the benchmarks, and the protocol that reproduces each with convoscope.

Each :class:`Figure` pairs a number printed in a paper with the value convoscope computes by the
paper's own procedure, to the paper's printed precision. The procedures, in CLI terms:

- USR, Table 2 (inter-annotator agreement): mean Spearman rho over the three pairs of
  annotation *slots* (the k-th rating of each response), ``convoscope agree human.jsonl
  --pair-by slot``. Pairing annotator identities gives higher values (TC Natural .5421).
- GPT-ABCEval (Finch, Paek & Choi, 2023): ChatGPT scored against each of the two human
  annotation sets alone and averaged, ``convoscope metaeval published.jsonl --human human.jsonl
  --human-sets each``. Against the pooled majority (ties as 0) F1+ is lower (!Rel 28.6).
- Ji et al. (2022), self-replication: per-system mean of the workers' z-scores over all
  criteria, free-topic run 1 against run 2, Pearson r over the ten systems without the
  quality-control bot. The released scores of the two negative criteria (robotic, repetitive)
  are already reversed — the file's z-scores are the per-worker standardisation of the raw
  scores as stored (:func:`ji_z_check`) — so they are averaged as stored; reversing them again
  (r = .881) would be a double reversal, not another protocol. Python: :func:`ji_replication`.
- FED (Mehri & Eskenazi, 2020b) prints inter-annotator agreement of .52-.84 over its qualities.
  The released file keeps five ratings per item; leave-one-out correlation needs no worker
  identities and gives .19-.47 on it; no variant tried (:func:`fed_agreement_variants`) covers
  the printed range (the closest, each annotator against the mean of all five with itself
  included, gives .52-.67). Not reproduced; the paper does not say more about its computation
  than a correlation between annotators.
- USR Table 2, PersonaChat Maintains Context, Engaging and Overall: convoscope's values are
  computed by the same protocol, but no copy of the printed values could be read here, so they are
  listed as not checked (``paper`` is None) rather than left out.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from convoscope.analysis import (
    by_slot,
    leave_one_out,
    mean_pool,
    metaeval,
    pairwise_correlation,
    pearson,
    per_rater_average,
    rater_matrices,
    run_agreement,
    spearman,
)
from convoscope.datasets._registry import load_benchmark as _load_benchmark


@functools.lru_cache(maxsize=4)
def load_benchmark(name: str, path: Path) -> Any:
    """Benchmarks are read once per process here: several figures come from the same file."""
    return _load_benchmark(name, path)


@dataclass(frozen=True)
class Figure:
    """One published number and ours; ``digits`` is the paper's printed precision. ``paper`` is
    None when the printed value could not be checked here (then ``matches`` is None too)."""

    source: str
    label: str
    paper: float | None
    ours: float
    digits: int
    how: str

    @property
    def matches(self) -> bool | None:
        if self.paper is None:
            return None
        return round(self.ours, self.digits) == round(self.paper, self.digits)


USR_TABLE2: dict[str, dict[str, float | None]] = {
    # USR (Mehri & Eskenazi, 2020a), Table 2: mean pairwise Spearman, by annotation slot. None: a
    # printed value we could not check here (the cell is still computed and shown).
    "usr-topicalchat": {"understandable": 0.5102, "natural": 0.4871, "maintains-context": 0.5599,
                        "engaging": 0.5811, "uses-knowledge": 0.7090, "overall": 0.7183},
    "usr-personachat": {"understandable": 0.2984, "natural": 0.4842, "maintains-context": None,
                        "engaging": None, "uses-knowledge": 0.8115, "overall": None},
}
ABC_CHATGPT_F1_POS = {"irrelevant": 40.6}  # GPT-ABCEval: ChatGPT, !Rel, F1 of the positive class (%)
JI_REPLICATION_R = 0.969  # Ji et al. (2022): system-level r between free-topic runs 1 and 2


def usr_figures(path: str | Path) -> list[Figure]:
    figures = []
    for name, published in USR_TABLE2.items():
        benchmark = load_benchmark(name, Path(path))
        slots = rater_matrices(by_slot(benchmark.human))
        for criterion, paper in published.items():
            ours = pairwise_correlation(slots[(criterion, None)].values)
            figures.append(Figure("USR Table 2", f"{name} {criterion}", paper, ours, 4,
                                  "agree --pair-by slot (mean pairwise Spearman)"))
    return figures


def abc_figures(path: str | Path) -> list[Figure]:
    benchmark = load_benchmark("abc-eval", Path(path))
    chatgpt = [v for v in benchmark.published if v.rater == "model:gpt-3.5-turbo"]
    averaged = {row.criterion: row for row in per_rater_average(chatgpt, benchmark.human)}
    return [Figure("GPT-ABCEval", f"ChatGPT {criterion} F1+ (%)", paper,
                   100 * (averaged[criterion].f1_pos or 0.0), 1, "metaeval --human-sets each")
            for criterion, paper in ABC_CHATGPT_F1_POS.items()]


def abc_pooled_f1(path: str | Path, criterion: str = "irrelevant") -> float:
    """ChatGPT's F1+ (%) against the pooled human majority (ties as 0): the default protocol."""
    benchmark = load_benchmark("abc-eval", Path(path))
    chatgpt = [v for v in benchmark.published if v.rater == "model:gpt-3.5-turbo"]
    row = metaeval(chatgpt, benchmark.human, criteria=[criterion], n_resamples=20)[0]
    return 100 * (row.binary.f1_pos if row.binary and row.binary.f1_pos is not None else float("nan"))


def ji_replication(path: str | Path) -> float:
    """System-level Pearson r of the free-topic runs (z-scores averaged over criteria)."""
    benchmark = load_benchmark("ji2022", Path(path))
    run_of = {item.id: item.meta["run"] for item in benchmark.items}
    per_run: dict[str, dict[str, list[float]]] = {}
    for rating in benchmark.derived["z"]:
        if rating.system == "QualityControl":
            continue
        item_scores = per_run.setdefault(run_of[rating.item_id], {})
        item_scores.setdefault(rating.system, []).append(rating.value)
    runs = {run: {system: float(np.mean(values)) for system, values in systems.items()}
            for run, systems in per_run.items()}
    return run_agreement(runs["free(run1)"], runs["free(run2)"], method="pearson")


def ji_z_check(path: str | Path) -> dict[str, tuple[int, int]]:
    """Do the released z-scores standardise the raw scores as stored, or their reversal? For each
    worker and run: the per-worker standardisation (mean and sample SD over all of the worker's
    ratings in the run, passed and failed HITs alike, + 1e-6, as the authors' ``mturk_process.py``)
    of the raw scores as stored, and with robotic / repetitive reversed (100 - score) first.
    Returns, per variant, (worker-runs whose z-scores it reproduces within 1e-5, worker-runs)."""
    benchmark = load_benchmark("ji2022-all", Path(path))
    z = {(r.item_id, r.criterion): r.value for r in benchmark.derived["z"]}
    run_of = {item.id: item.meta["run"] for item in benchmark.items}
    by_worker: dict[tuple[str, str], list[Any]] = {}
    for verdict in benchmark.human:
        by_worker.setdefault((run_of[verdict.item_id], verdict.rater), []).append(verdict)
    tested = [v for v in by_worker.values() if all((r.item_id, r.criterion) in z for r in v)]
    found = {}
    for label, flip in (("as stored", False), ("reversed again", True)):
        matching = 0
        for verdicts in tested:
            raw = np.array([100 - v.value if flip and v.criterion in ("robotic", "repetitive") else v.value
                            for v in verdicts], dtype=float)
            standardised = (raw - raw.mean()) / (raw.std(ddof=1) + 1e-6)
            expected = np.array([z[(v.item_id, v.criterion)] for v in verdicts])
            matching += bool(np.abs(standardised - expected).max() < 1e-5)
        found[label] = (matching, len(tested))
    return found


def ji_figures(path: str | Path) -> list[Figure]:
    return [Figure("Ji et al. 2022", "self-replication r (free run 1 vs 2)", JI_REPLICATION_R,
                   ji_replication(path), 3, "derived['z'] + run_agreement")]


def fed_agreement_variants(path: str | Path) -> dict[str, tuple[float, float]]:
    """Range (min, max) over FED's qualities of each agreement procedure tried on the released file."""
    variants: dict[str, list[float]] = {}
    for name in ("fed-turn", "fed-dialogue"):
        benchmark = load_benchmark(name, Path(path))
        for matrix in rater_matrices(benchmark.human).values():
            values = matrix.values
            everyone = mean_pool(values)
            found = {
                "leave-one-out Spearman": leave_one_out(values),
                "pairwise Spearman": pairwise_correlation(values),
                "leave-one-out Pearson": leave_one_out(values, statistic=pearson),
                "each vs mean of all five, Spearman": _mean_with(spearman, values, everyone),
                "each vs mean of all five, Pearson": _mean_with(pearson, values, everyone),
            }
            for label, value in found.items():
                variants.setdefault(label, []).append(value)
    return {label: (min(values), max(values)) for label, values in variants.items()}


def _mean_with(statistic: Any, values: np.ndarray, everyone: np.ndarray) -> float:
    return float(np.mean([statistic(row, everyone) for row in values]))


def all_figures(data: str | Path) -> list[Figure]:
    """Every figure whose data is under ``data`` (one folder per benchmark, as in shared/data)."""
    data = Path(data)
    figures: list[Figure] = []
    for folder, collect in (("usr", usr_figures), ("abc-eval-gpt", abc_figures),
                            ("ji2022-dialogue-eval", ji_figures)):
        if (data / folder).exists():
            figures.extend(collect(data / folder))
    return figures


__all__ = ["Figure", "all_figures", "fed_agreement_variants", "ji_replication", "ji_z_check"]
