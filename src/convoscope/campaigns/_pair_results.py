"""A pairwise campaign's results: win rates, Bradley–Terry strengths and people's side preference.

People's pairwise answers are ordinary pairwise verdicts (``system`` ``A~B``, ``value`` the
winning system or ``tie``), so the statistics are :mod:`convoscope.pairwise`'s, the same a judge's
pairwise verdicts get. Two views, as the protocol reports absolute answers: *majority* (one
outcome per pair, the most frequent answer; an even split between the top answers is a tie) and
*all votes* (every answer an outcome). Each person sees a pair in one order only, so a person's
position bias shows as the share of their decisive answers that chose the response shown first,
tested against one half (two-sided binomial test).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from convoscope.campaigns._answers import IDK, TIE, shown_slot
from convoscope.judges import RaterKind, Verdict
from convoscope.pairwise import Strength, WinRate, bradley_terry, majority_outcomes, outcomes, win_rates


@dataclass(frozen=True)
class SideShare:
    """How often one person (or everyone, ``annotator="all"``) chose the response shown first."""

    annotator: str
    decisive: int  # answers that named a response (not tie, not "I don't know")
    first: int
    share: float | None
    p_value: float | None  # two-sided binomial test against 0.5


@dataclass(frozen=True)
class PairResults:
    criterion: str
    pairs: int
    votes: int
    ties: int
    idk: int
    majority: list[WinRate] = field(default_factory=list)
    all_votes: list[WinRate] = field(default_factory=list)
    strengths: list[Strength] = field(default_factory=list)
    sides: list[SideShare] = field(default_factory=list)
    excluded: dict[str, float] = field(default_factory=dict)  # side-biased people left out, with their p


SIDE_BIAS_ALPHA = 0.05  # family-wise, over the people of the campaign (Holm)


def pair_results(verdicts: Sequence[Verdict], criteria: Sequence[str], *, n_resamples: int = 1000,
                 seed: int = 0, exclude_side_biased: bool = False) -> list[PairResults]:
    """One :class:`PairResults` per criterion that has answers, in campaign order.

    With ``exclude_side_biased``, the answers of the people :func:`side_biased` names leave the
    win rates and strengths (their side preference is still shown, and ``excluded`` names them)."""
    biased = side_biased(verdicts) if exclude_side_biased else {}
    rows = []
    for criterion in criteria:
        mine = [v for v in verdicts if v.criterion == criterion]
        scored = [v for v in mine if v.value is not None]
        if not scored:
            continue
        kept = [v for v in scored if RaterKind.HUMAN.name_of(v.rater) not in biased]
        row = PairResults(criterion=criterion, pairs=len({v.item_id for v in kept}), votes=len(kept),
                          ties=sum(v.value == TIE for v in kept),
                          idk=sum(v.unscored_reason == IDK for v in mine), sides=side_shares(scored),
                          excluded=biased)
        if kept:  # everyone may have been left out
            every = outcomes(kept)
            row.majority.extend(win_rates(majority_outcomes(kept), n_resamples=n_resamples, seed=seed))
            row.all_votes.extend(win_rates(every, n_resamples=n_resamples, seed=seed))
            row.strengths.extend(bradley_terry(every, n_resamples=min(n_resamples, 200), seed=seed))
        rows.append(row)
    return rows


def side_biased(verdicts: Sequence[Verdict], *, alpha: float = SIDE_BIAS_ALPHA) -> dict[str, float]:
    """People whose share of choosing the response shown first departs from one half, over all
    their pairwise answers: two-sided binomial test per person, Holm-adjusted across people (so
    that among 30 honest annotators, about one in twenty campaigns flags anyone by chance at all).
    Returns each such person with their adjusted p-value."""
    from statsmodels.stats.multitest import multipletests

    people = [share for share in side_shares(verdicts)
              if share.annotator != "all" and share.p_value is not None]
    if not people:
        return {}
    reject, adjusted, _, _ = multipletests([share.p_value for share in people], alpha=alpha, method="holm")
    return {share.annotator: float(p) for share, p, out in zip(people, adjusted, reject, strict=True) if out}


def side_shares(verdicts: Sequence[Verdict]) -> list[SideShare]:
    """Per person and over everyone: the share of decisive answers that chose the first response."""
    from scipy.stats import binomtest

    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for verdict in verdicts:
        recorded = shown_slot(verdict)
        if recorded is None or recorded[1] not in ("first", "second"):
            continue
        for who in (RaterKind.HUMAN.name_of(verdict.rater), "all"):
            counts[who][0] += 1
            counts[who][1] += recorded[1] == "first"
    shares = []
    for who, (decisive, first) in sorted(counts.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        p_value = float(binomtest(first, decisive, 0.5).pvalue) if decisive else None
        shares.append(SideShare(who, decisive, first, first / decisive if decisive else None, p_value))
    return shares
