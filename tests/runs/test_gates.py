"""Release gates: --fail-under reads the run's verdicts and decides the exit status."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from convoscope import Verdict
from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.errors import ConfigError
from convoscope.runs import GateRule, check_gates, parse_gate

_register()


def _verdicts():
    return [Verdict(item_id=f"i{n}", criterion="overall", rater="model:j", value=value)
            for n, value in enumerate([2, 4, 5, None])] + [
        Verdict(item_id=f"i{n}", criterion="kpi:follow-up", rater="model:j", value=label)
        for n, label in enumerate(["yes", "yes", "no", "yes"])]


def test_parse_gate_reads_means_and_shares():
    assert parse_gate("overall=3.5") == GateRule("overall", 3.5)
    assert parse_gate("follow-up:yes=0.9") == GateRule("follow-up", 0.9, "yes")
    for bad in ("overall", "=3", "overall=high", "follow-up:yes=2"):
        with pytest.raises(ConfigError):
            parse_gate(bad)


def test_gates_compare_the_mean_and_the_share_of_a_label():
    mean, share = check_gates(_verdicts(), [parse_gate("overall=3.5"), parse_gate("follow-up:yes=0.8")])
    assert mean.observed == pytest.approx(11 / 3) and mean.passed and mean.n == 3
    assert share.observed == 0.75 and not share.passed


def test_a_gate_on_a_criterion_the_run_did_not_score_is_an_error():
    with pytest.raises(ConfigError, match="did not score; scored: kpi:follow-up, overall"):
        check_gates(_verdicts(), [parse_gate("relevance=1")])


@pytest.mark.slow
def test_judge_exits_5_below_a_gate_and_0_above_it(tmp_path):
    args = ["judge", "examples/survey_items.jsonl", "--criterion", "survey/relevance", "--limit", "2",
            "--store", str(tmp_path / "run.db")]
    failing = CliRunner().invoke(cli, [*args, "--fail-under", "relevance=99"], env={"COLUMNS": "200"})
    assert failing.exit_code == 5, failing.output
    assert "gate relevance=99" in failing.output and "FAIL" in failing.output
    passing = CliRunner().invoke(cli, [*args, "--fail-under", "relevance=0"], env={"COLUMNS": "200"})
    assert passing.exit_code == 0, passing.output
    assert "pass" in passing.output
