"""Issue 38, observation 6 (last part): with two judges, max-vote turned every disagreement into
"not fulfilled" (ties broke low by default), so the KPI rubric's own positive example came out not
fulfilled as soon as one judge said no. Seed 004 pools three LLMs or five people by their mode,
where a binary split cannot tie; with two judges every disagreement is a tie, and the default now
leaves it unscored (reason ``tie``) and says so, instead of siding with the negative.

The two judges are fakes (Python judges that always say fulfilled / not fulfilled), named as such."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from convoscope.cli._judge import judge_command
from convoscope.criteria import get_criterion
from convoscope.items import Item
from convoscope.judges import make_judge
from convoscope.runs import RunOptions, judge

FOLLOW_UP = get_criterion("kpi/follow-up")
# The rubric's own example of a fulfilled follow-up (kpi.yaml, level "fulfilled").
POSITIVE = Item(id="positive", context=(
    {"speaker": "user", "text": "How do I turn on the seat heating?"},
    {"speaker": "assistant", "text": "Press the seat icon on the centre console."},
    {"speaker": "user", "text": "And for the back seats?"}),
    response="The rear seats have their own buttons on the back of the centre console.")

FAKE_YES = make_judge(lambda item, criterion: True, name="fake-says-fulfilled", version="1")
FAKE_NO = make_judge(lambda item, criterion: False, name="fake-says-not-fulfilled", version="1")


def _pooled(tmp_path: Path, judges, **options):
    tmp_path.mkdir(exist_ok=True)
    result = judge([POSITIVE], [FOLLOW_UP], judges, store=tmp_path / "s.db", cache_path=None,
                   pool="max-vote", **options)
    (pooled,) = [v for v in result.verdicts if v.rater.startswith("panel:")]
    return pooled


def test_a_two_judge_max_vote_split_is_not_turned_into_not_fulfilled(tmp_path) -> None:
    pooled = _pooled(tmp_path, [FAKE_YES, FAKE_NO])
    assert pooled.value is None and pooled.unscored_reason == "tie"
    # The verdict states the rule that decided it.
    assert "tie" in pooled.reason and "left unscored" in pooled.reason


@pytest.mark.parametrize(("ties", "value", "said"), [("low", 0, "broken low"), ("high", 1, "broken high")])
def test_a_tie_rule_chosen_on_purpose_breaks_the_split_and_says_which_way(tmp_path, ties, value,
                                                                         said) -> None:
    pooled = _pooled(tmp_path, [FAKE_YES, FAKE_NO], ties=ties)
    assert pooled.value == value and said in pooled.reason


def test_agreement_and_a_real_majority_are_untouched(tmp_path) -> None:
    assert _pooled(tmp_path / "a", [FAKE_YES, FAKE_YES]).value == 1
    majority = _pooled(tmp_path / "b", [FAKE_YES, FAKE_NO, make_judge(FAKE_YES, name="fake-yes-2")])
    assert majority.value == 1 and "tie" not in majority.reason


def test_the_default_tie_rule_is_the_same_for_the_command_and_the_api() -> None:
    option = next(p for p in judge_command.params if p.name == "ties")
    assert option.default == RunOptions().ties == "unscored"
    assert "--ties" in CliRunner().invoke(judge_command, ["--help"]).output
