"""A judging run's result as a value: its verdicts, its summary, tables for analysis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from convoscope.judges import Verdict
from convoscope.runs._gate import EXIT_BELOW_GATE, GateResult
from convoscope.runs._summary import DEFAULT_MAX_UNSCORED, RunSummary

if TYPE_CHECKING:
    import pandas as pd

    from convoscope.analysis import RaterMatrix


@dataclass(frozen=True)
class RunResult:
    """What :func:`convoscope.runs.judge` returns.

    ``verdicts``: the run's final verdict of every task (one per item and criterion: the judge's,
    or the panel's pooled one), as they stand in the store when the run ends (tasks judged
    before a resume included). ``member_verdicts``: each panel member's own verdicts (empty for
    a single judge). ``summary``: counts of what this invocation did (:class:`RunSummary`).
    ``gates``: each release gate the run was given (``gates=``), with what it observed.
    """

    run_id: str
    verdicts: tuple[Verdict, ...]
    summary: RunSummary
    member_verdicts: tuple[Verdict, ...] = ()
    store: str = ""
    gates: tuple[GateResult, ...] = ()

    @property
    def raters(self) -> tuple[str, ...]:
        """Every rater name in the result (members first, then the final rater)."""
        names = [verdict.rater for verdict in (*self.member_verdicts, *self.verdicts)]
        return tuple(dict.fromkeys(names))

    def exit_code(self, max_unscored: float = DEFAULT_MAX_UNSCORED) -> int:
        """See :meth:`RunSummary.exit_code` (0 done, 3 work outstanding, 4 too many unscored);
        5 when the run is otherwise done but below one of its ``gates``."""
        code = self.summary.exit_code(max_unscored)
        if not code and not all(gate.passed for gate in self.gates):
            return EXIT_BELOW_GATE
        return code

    def to_pandas(self, *, members: bool = False) -> pd.DataFrame:
        """One row per verdict (the final ones; ``members=True`` adds the panel members')."""
        import pandas as pd

        rows = [*self.verdicts, *(self.member_verdicts if members else ())]
        columns = list(Verdict.model_fields)
        return pd.DataFrame([verdict.model_dump(mode="json") for verdict in rows], columns=columns)

    def matrix(self, criterion: str, *, score: str = "value", keep_idk: bool = False) -> RaterMatrix:
        """Raters x items for one criterion, as the analysis functions take it: the panel's
        members and its pooled rater each have a row. ``score="expected_value"`` reads a judge's
        probability-weighted score where it has one."""
        from convoscope.analysis import rater_matrices

        matrices = rater_matrices([*self.member_verdicts, *self.verdicts], keep_idk=keep_idk,
                                  score=score)  # type: ignore[arg-type]
        try:
            return matrices[(criterion, None)]
        except KeyError:
            known = sorted({name for name, _ in matrices})
            raise KeyError(f"no verdicts on {criterion!r} in run {self.run_id}; "
                           f"criteria: {', '.join(known) or 'none'}") from None

    def __repr__(self) -> str:
        summary = self.summary
        return (f"RunResult(run_id={self.run_id!r}, verdicts={len(self.verdicts)}, "
                f"scored={sum(v.value is not None for v in self.verdicts)}, "
                f"resumed={summary.resumed}, model_calls={summary.model_calls})")
