"""Inter-rater agreement of a whole annotation table, per criterion: what ``convoscope agree``
prints. Each statistic that is undefined for a criterion is None, with the reason in ``notes``,
so one degenerate criterion never hides the others."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import numpy as np

from convoscope.analysis._agreement import (
    StrongAgreement,
    Weights,
    fleiss_kappa,
    pairwise_cohen_kappa,
    percent_agreement,
    strong_agreement,
)
from convoscope.analysis._bootstrap import BootstrapResult
from convoscope.analysis._krippendorff import LEVELS, Level, krippendorff_alpha
from convoscope.analysis._raters import leave_one_out, pairwise_correlation
from convoscope.analysis._tables import IDK, GroupBy, RaterMatrix, rater_matrices
from convoscope.analysis._validate import missing_mask

T = TypeVar("T")
IDK_ANSWERS = ("idk", "i don't know", "i don’t know", "don't know", "dont know", "unsure")
KAPPA_WEIGHTS: dict[str, Weights] = {
    "nominal": None, "ordinal": "linear", "interval": "quadratic", "ratio": "quadratic",
}


@dataclass(frozen=True)
class AgreementRow:
    """Agreement among the raters of one criterion (and group)."""

    criterion: str
    group: str | None
    level: str
    n_items: int  # items with two or more ratings
    n_raters: int
    percent_agreement: float | None
    fleiss_kappa: float | None
    krippendorff_alpha: float | None
    mean_cohen_kappa: float | None
    cohen_weights: str | None
    strong: StrongAgreement | None
    notes: tuple[str, ...] = ()
    # Correlation agreement on numeric scales (None for labels): mean Spearman rho over rater
    # pairs (USR's inter-annotator agreement), and each rater against the mean of the others.
    pairwise_spearman: float | None = None
    loo_spearman: float | None = None
    # Percentile bootstrap intervals over items (None when not asked for or undefined).
    alpha_ci: BootstrapResult | None = None
    fleiss_ci: BootstrapResult | None = None
    cohen_ci: BootstrapResult | None = None

    @property
    def computed(self) -> bool:
        """Whether any statistic could be computed for this criterion."""
        return any(value is not None for value in (
            self.percent_agreement, self.fleiss_kappa, self.krippendorff_alpha, self.mean_cohen_kappa,
            self.pairwise_spearman, self.loo_spearman))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def attempt(notes: list[str], label: str, compute: Callable[[], T]) -> T | None:
    """Run one statistic; an undefined one becomes None and a note instead of an exception."""
    try:
        return compute()
    except ValueError as error:
        notes.append(f"{label}: {error}")
        return None


def mark_idk(judgements: Iterable[Any], answers: Iterable[str] = IDK_ANSWERS) -> list[Any]:
    """Judgements whose text value is an "I don't know" answer, recast as unscored with reason
    ``idk`` (the way a Verdict records it)."""
    lowered = {answer.strip().lower() for answer in answers}
    marked = []
    for judgement in judgements:
        value = judgement.value
        if isinstance(value, str) and value.strip().lower() in lowered:
            judgement = _replace(judgement, value=None, unscored_reason="idk")
        marked.append(judgement)
    return marked


def _replace(judgement: Any, **changes: Any) -> Any:
    if hasattr(judgement, "model_copy"):  # a pydantic Verdict
        return judgement.model_copy(update=changes)
    from dataclasses import replace

    return replace(judgement, **changes)


def agreement_table(
    judgements: Iterable[Any],
    *,
    level: Level | None = None,
    by: GroupBy = None,
    idk: Iterable[str] = IDK_ANSWERS,
    labels: list[Any] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> list[AgreementRow]:
    """Agreement statistics per criterion (and per language or system with ``by``).

    ``judgements``: ratings, verdicts, or a DataFrame of them (``item_id`` — or ``item`` —,
    ``criterion``, ``rater``, ``value``; e.g. ``RunResult.to_pandas()``). "I don't know" answers
    (text values in ``idk``, or unscored with reason ``idk``) are missing for every statistic
    except strong agreement, which removes their items (seed 003). ``level`` defaults to ordinal
    for numbers and nominal for labels, as in :func:`metaeval`. Pairwise Cohen's kappa is
    weighted to suit the level: none for nominal, linear for ordinal, quadratic for interval and
    ratio. ``labels`` gives the scale order for ordinal text labels. Alpha, Fleiss' kappa and the
    mean Cohen's kappa get percentile bootstrap intervals over items (``n_resamples=0``: none).

    Example: ``agreement_table(read_ratings("annotations.csv"), level="ordinal")``.
    """
    if level is not None and level not in LEVELS:
        raise ValueError(f"agreement_table: level must be one of {LEVELS} or None, got {level!r}")
    matrices = _matrices_of(judgements, by, idk)
    resampling = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    return [_row(matrix, level, labels, resampling) for _, matrix in sorted(matrices.items(), key=_sort_key)]


def _matrices_of(judgements: Any, by: GroupBy,
                 idk: Iterable[str]) -> dict[tuple[str, str | None], RaterMatrix]:
    """Judgement objects go through :func:`rater_matrices`; a DataFrame from
    :func:`convoscope.analysis._frame.read_frame` with numeric values is tabulated column-wise."""
    if hasattr(judgements, "columns"):
        from convoscope.analysis._frame import as_ratings, frame_matrices, standard_frame

        frame = standard_frame(judgements)
        if frame["value"].dtype.kind == "f" and frame["item_id"].dtype.name == "category":
            return frame_matrices(frame, by=by)  # read_frame's column-wise path
        judgements = as_ratings(frame)
    return rater_matrices(mark_idk(judgements, idk), by=by, keep_idk=True)


def _sort_key(entry: tuple[tuple[str, str | None], RaterMatrix]) -> tuple[str, str]:
    criterion, group = entry[0]
    return criterion, group or ""


def _row(matrix: RaterMatrix, chosen: Level | None, labels: list[Any] | None,
         resampling: dict[str, Any]) -> AgreementRow:
    notes: list[str] = []
    plain = matrix.without_idk()
    values = plain.values
    level: Level = chosen or ("ordinal" if plain.numeric else "nominal")
    n_items = int(((~missing_mask(values)).sum(axis=0) >= 2).sum())
    weights = KAPPA_WEIGHTS[level]
    scale = labels if labels is not None else integer_scale(values)
    pairwise = attempt(notes, "Cohen's kappa",
                       lambda: pairwise_cohen_kappa(values, weights=weights, labels=scale).mean)
    percent = attempt(notes, "percent agreement", lambda: percent_agreement(values))
    kappa_notes: list[str] = []
    fleiss = attempt(kappa_notes, "Fleiss' kappa", lambda: fleiss_kappa(values))
    notes.extend(kappa_notes)
    if matrix.numeric and percent is not None:  # numbers hold no "I don't know": nothing is removed
        strong: StrongAgreement | None = StrongAgreement(
            n_items, 0, percent, fleiss, kappa_notes[0].partition(": ")[2] if kappa_notes else None)
    else:
        strong = attempt(notes, "strong agreement", lambda: strong_agreement(matrix.values, idk=IDK))
    return AgreementRow(
        criterion=matrix.criterion, group=matrix.group, level=level, n_items=n_items,
        n_raters=len(matrix.raters), percent_agreement=percent, fleiss_kappa=fleiss,
        krippendorff_alpha=attempt(notes, "Krippendorff's alpha",
                                   lambda: krippendorff_alpha(values, level=level, labels=labels)),
        mean_cohen_kappa=pairwise, cohen_weights=weights, strong=strong,
        pairwise_spearman=_correlation(notes, "pairwise rho", pairwise_correlation, plain),
        loo_spearman=_correlation(notes, "leave-one-out rho", leave_one_out, plain),
        notes=tuple(notes), **_intervals(values, level, labels, scale, resampling),
    )


def _intervals(values: np.ndarray, level: Level, labels: list[Any] | None, scale: Any,
               resampling: dict[str, Any]) -> dict[str, BootstrapResult | None]:
    """Bootstrap intervals of alpha and the kappas; undefined ones (or n_resamples=0) are None."""
    from convoscope.analysis._agreement_ci import (
        fleiss_kappa_ci,
        krippendorff_alpha_ci,
        pairwise_cohen_kappa_ci,
    )

    if not resampling["n_resamples"]:
        return {}
    quiet: list[str] = []  # the point estimates above already carry the reasons
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {"alpha_ci": attempt(quiet, "", lambda: krippendorff_alpha_ci(
                    values, level=level, labels=labels, **resampling)),
                "fleiss_ci": attempt(quiet, "", lambda: fleiss_kappa_ci(values, **resampling)),
                "cohen_ci": attempt(quiet, "", lambda: pairwise_cohen_kappa_ci(
                    values, weights=KAPPA_WEIGHTS[level], labels=scale, **resampling))}


def _correlation(notes: list[str], label: str, statistic: Callable[[Any], float],
                 matrix: RaterMatrix) -> float | None:
    if not matrix.numeric:
        return None
    if statistic is leave_one_out and len(matrix.raters) < 3:
        return None  # needs three raters; pairwise covers two
    return attempt(notes, label, lambda: statistic(matrix.values))


def by_slot(judgements: Iterable[Any]) -> list[Any]:
    """The same judgements with each rater replaced by its slot: ``slot:k`` is the k-th rating of
    an item on a criterion, in input order. Pairing raters by slot rather than by identity is
    how USR's published agreement is computed (each response has three ratings, listed in the
    order of the context's annotators, and the people change between contexts).

    >>> from convoscope.analysis import Rating
    >>> rows = [Rating("a", "q", "human:x", 1), Rating("a", "q", "human:y", 2),
    ...         Rating("b", "q", "human:y", 3), Rating("b", "q", "human:z", 3)]
    >>> [r.rater for r in by_slot(rows)]
    ['slot:1', 'slot:2', 'slot:1', 'slot:2']
    """
    if hasattr(judgements, "columns"):  # a DataFrame from the fast reader
        frame: Any = judgements
        frame = frame.copy()
        slot = frame.groupby(["criterion", "item_id"], sort=False).cumcount() + 1
        frame["rater"] = "slot:" + slot.astype(str)
        return frame
    seen: dict[tuple[str, str], int] = {}
    slotted = []
    for judgement in judgements:
        key = (str(judgement.criterion), str(judgement.item_id))
        seen[key] = seen.get(key, 0) + 1
        slotted.append(_replace(judgement, rater=f"slot:{seen[key]}"))
    return slotted


def integer_scale(values: np.ndarray) -> list[int] | None:
    """Every integer from the lowest to the highest rating, when ratings are whole numbers, so a
    weighted kappa counts unused levels in its distances; otherwise None (observed values)."""
    if values.dtype == object:
        return None
    present = values[~np.isnan(values)]
    if present.size == 0 or not np.all(present == np.round(present)):
        return None
    low, high = int(present.min()), int(present.max())
    return list(range(low, high + 1)) if high - low <= 1000 else None
