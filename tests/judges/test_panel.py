import pytest

from convoscope.items import Item
from convoscope.judges import Panel, Verdict, pool_values


def test_majority_tie_rules(effort, kpi):
    assert pool_values([1, 1, 3], effort) == 1
    assert pool_values([3, 1], effort, ties="low") == 1
    assert pool_values([3, 1], effort, ties="high") == 3
    assert pool_values([3, 1], effort, ties="unscored") is None
    # A split binary vote takes no side by default (issue 38): neither "fulfilled" nor "not fulfilled".
    assert pool_values([1, 0], kpi) is None
    assert pool_values([1, 0], kpi, ties="low") == 0
    assert pool_values([], effort) is None


def test_mean_median(effort, appropriate):
    assert pool_values([1, 2, 4], effort, rule="mean") == pytest.approx(7 / 3)
    assert pool_values([1, 2, 4, 4], effort, rule="median") == 3.0
    with pytest.raises(ValueError, match="numeric scale"):
        pool_values(["positive"], appropriate, rule="mean")


class ScriptedJudge:
    """A fake judge returning a preset value (unit tests only)."""

    def __init__(self, name, value, reason=None):
        self.rater, self.value, self.reason = f"model:{name}", value, reason

    def identity(self):
        return {"fake": self.rater}

    async def __call__(self, item, criterion):
        return Verdict(item_id=item.id, criterion=criterion.name, rater=self.rater,
                       value=self.value, unscored_reason=self.reason, prompt_tokens=10)


async def test_panel_pools_and_keeps_members(effort):
    panel = Panel((ScriptedJudge("a", 2), ScriptedJudge("b", 2), ScriptedJudge("c", None, "parse_failure")),
                  rule="majority")
    pooled, members = await panel.judge_all(Item(id="1", response="r"), effort)
    assert pooled.value == 2 and pooled.rater == "panel:majority"
    assert pooled.prompt_tokens == 30 and pooled.distribution == {"2": 1.0}
    assert [m.rater for m in members] == ["model:a", "model:b", "model:c"]


async def test_panel_quorum_and_mean_rounding(effort):
    item = Item(id="1", response="r")
    panel = Panel((ScriptedJudge("a", 1), ScriptedJudge("b", None, "refusal")), quorum=2)
    pooled = await panel(item, effort)
    assert pooled.value is None and pooled.unscored_reason == "no_quorum"
    mean_panel = Panel((ScriptedJudge("a", 1), ScriptedJudge("b", 2)), rule="mean")
    pooled = await mean_panel(item, effort)
    assert pooled.expected_value == 1.5 and pooled.value == 2


def test_panel_needs_two_members(effort):
    with pytest.raises(ValueError, match="at least two"):
        Panel((ScriptedJudge("a", 1),))
