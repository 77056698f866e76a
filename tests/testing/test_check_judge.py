"""Issue 35, observation 5: ``convoscope.testing.check_judge`` gives a plug-in author the judge
contract in one call (scikit-learn's ``check_estimator`` is the model). Each broken judge below
breaks one rule and must be caught, with the rule named; a good judge passes."""

from __future__ import annotations

import asyncio
import itertools

import pytest

import convoscope as cs
from convoscope.testing import JudgeContractError, check_judge


@cs.python_judge(name="length", version="1")
def length_judge(item, criterion):
    """A well-behaved judge for every scale kind."""
    words = len((item.response or "").split())
    if criterion.scale.kind == "labels":
        return cs.Unscored("no response", reason="idk") if item.response is None else "mid"
    if criterion.scale.kind == "binary":
        return int(words > 2)
    return min(5, 1 + words // 2), f"{words} words"


def test_a_judge_that_keeps_the_contract_passes_and_returns_its_verdicts():
    verdicts = check_judge(length_judge)
    assert len(verdicts) == 4 * 3 and {v.criterion for v in verdicts} == {"check-binary", "check-range",
                                                                          "check-labels"}
    assert all(v.rater == "python:length" for v in verdicts)


async def test_check_judge_runs_from_async_code_too():
    assert len(check_judge(length_judge)) == 12


class RaisingJudge:
    rater = "python:raises"

    def identity(self):
        return {"name": "raises"}

    async def __call__(self, item, criterion):
        raise ValueError("boom")


class OffScaleJudge(RaisingJudge):
    rater = "python:off-scale"

    async def __call__(self, item, criterion):
        return cs.Verdict(item_id=item.id, criterion=criterion.name, rater=self.rater, value=99)


class WrongItemJudge(RaisingJudge):
    rater = "python:wrong-item"

    async def __call__(self, item, criterion):
        return cs.Verdict(item_id="other", criterion=criterion.name, rater=self.rater, value=1)


class ShiftingIdentityJudge(RaisingJudge):
    rater = "python:shifting"
    counter = itertools.count()

    def identity(self):
        return {"name": "shifting", "call": next(self.counter)}

    async def __call__(self, item, criterion):
        return cs.Verdict(item_id=item.id, criterion=criterion.name, rater=self.rater, value=None,
                          unscored_reason="not_applicable")


class StatefulJudge(RaisingJudge):
    """DeepEval's pattern: the score kept on the instance, read back after an await."""

    rater = "python:stateful"

    async def __call__(self, item, criterion):
        self.score = 1 if item.response else 0
        await asyncio.sleep(0)
        return cs.Verdict(item_id=item.id, criterion=criterion.name, rater=self.rater, value=self.score)


class NoReasonJudge(RaisingJudge):
    rater = "python:no-reason"

    async def __call__(self, item, criterion):
        return cs.Verdict(item_id=item.id, criterion=criterion.name, rater=self.rater, value=None)


@pytest.mark.parametrize(("judge", "rule"), [
    (RaisingJudge(), r"raised ValueError: boom \(a failure must be an unscored verdict"),
    (OffScaleJudge(), r"value 99 is not on the scale"),
    (WrongItemJudge(), r"verdict's item_id is 'other', not 'check-response'"),
    (ShiftingIdentityJudge(), r"identity\(\) differs between two calls"),
    (StatefulJudge(), r"judging two items at once changed the answers"),
    (NoReasonJudge(), r"no value and no unscored_reason"),
    (42, r"not a judge"),
])
def test_each_broken_rule_is_caught_and_named(judge, rule):
    with pytest.raises(JudgeContractError, match=rule):
        check_judge(judge)


def test_a_python_judge_that_raises_is_already_an_unscored_verdict_so_it_passes():
    @cs.python_judge(name="fragile")
    def fragile(item, criterion):
        raise RuntimeError("cannot read")

    verdicts = check_judge(fragile)
    assert {v.unscored_reason for v in verdicts} == {"judge_error"}
