"""Repeated judgements and one set of option names (issue 27, observations 3 and 4).

Before: no way to ask a judge N times and measure its self-consistency; the CLI's concurrency
default was 8 and the library's 16; ``--otel`` had no Python name (``cs.judge(..., otel=True)``
raised TypeError); ``cs.judge(items, criteria, judge, **options)`` hid its arguments from editors.
"""

from __future__ import annotations

import inspect
import json

import click
import pytest
from click.testing import CliRunner
from test_run_semantics import CRITERION, ScriptedModel, corpus

import convoscope as cs
from convoscope.analysis import krippendorff_alpha
from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.criteria import Criterion, Scale
from convoscope.judges._judge import sample_value
from convoscope.runs import RunOptions, build_judge, judge, judge_async, self_consistency
from convoscope.runs._repeats import base_rater

_register()


def test_the_cli_and_the_library_share_option_names_and_defaults():
    command = cli.commands["judge"]
    context = click.Context(command)
    unset = getattr(click.core, "UNSET", None)  # click 8.3+: an option without a default
    cli_defaults = {param.name: None if (value := param.get_default(context, call=False)) is unset else value
                    for param in command.params if isinstance(param, click.Option)}
    library = inspect.signature(judge_async).parameters
    for field, default in ((name, value.default) for name, value in RunOptions.__dataclass_fields__.items()):
        assert field in cli_defaults, f"convoscope judge has no option for {field}"
        assert field in library, f"judge_async has no parameter {field}"
        expected = tuple(default) if isinstance(default, tuple) else default
        assert cli_defaults[field] == expected == library[field].default, field


def test_the_sync_edge_shows_every_keyword_to_editors():
    parameters = inspect.signature(cs.judge).parameters
    assert {"concurrency", "otel", "repeats", "temperature", "timeout", "store"} <= set(parameters)
    assert parameters["concurrency"].default == 8
    assert cs.judge is judge and cs.judge.__name__ == "judge"


async def test_repeats_store_each_sample_pool_them_and_report_self_consistency(tmp_path):
    from convoscope.models import register_backend

    register_backend("scripted-repeats", lambda rest, **options: ScriptedModel(name="scripted-repeats"))
    result = await judge_async(corpus(4), [CRITERION], "scripted-repeats:x", store=tmp_path / "s.db",
                               cache_path=None, repeats=3)
    assert len(result.verdicts) == 4 and len(result.member_verdicts) == 12
    raters = sorted({v.rater for v in result.member_verdicts})
    assert raters == [f"model:scripted-repeats~r{n}" for n in (1, 2, 3)]
    assert result.verdicts[0].rater == "panel:majority×3(model:scripted-repeats)"
    (found,) = result.summary.self_consistency
    assert found["judge"] == "model:scripted-repeats" and found["repeats"] == 3 and found["agreement"] == 1.0
    again = await judge_async(corpus(4), [CRITERION], "scripted-repeats:x", store=tmp_path / "s.db",
                              cache_path=None, repeats=3)
    assert again.summary.resumed == 4 and again.summary.model_calls == 0  # each repeat resumable


def test_repeats_ask_with_distinct_seeds_at_a_temperature():
    judge_, _ = build_judge([cs.JudgeSpec("embedded")], repeats=3, cache=None)
    members = [(m.seed, m.temperature, m.repeat) for m in judge_.members]
    assert members == [(0, 0.7, 1), (1, 0.7, 2), (2, 0.7, 3)]
    requests = [member.request(corpus(1)[0], CRITERION) for member in judge_.members]
    assert len({(r.seed, r.temperature) for r in requests}) == 3  # distinct requests, distinct keys
    single, _ = build_judge([cs.JudgeSpec("embedded")], cache=None)
    plain = single.request(corpus(1)[0], CRITERION)
    assert plain.seed == 0 and plain.temperature == 0.0  # without repeats: as before (keys unchanged)


def test_a_repeat_in_completion_mode_draws_from_the_tempered_distribution():
    binary = Criterion(name="ok", question="OK?", definition="Fine.", scale=Scale(kind="binary"))
    draws = [sample_value({"1": 0.8, "0": 0.2}, binary, temperature=1.0, seed=(s, "i", "ok"))
             for s in range(2000)]
    assert 0.77 < draws.count(1) / 2000 < 0.83  # sampled in proportion at temperature 1
    assert draws == [sample_value({"1": 0.8, "0": 0.2}, binary, temperature=1.0, seed=(s, "i", "ok"))
                     for s in range(2000)]  # the same seeds draw the same values
    cold = [sample_value({"1": 0.8, "0": 0.2}, binary, temperature=0.1, seed=(s, "i", "ok"))
            for s in range(200)]
    assert cold.count(1) >= 199  # a low temperature almost always takes the most probable value


def test_self_consistency_is_modal_agreement_and_alpha_over_repeats():
    values = {"a": [1, 1, 1], "b": [2, 2, 3], "c": [5, 4, 5], "d": [3, 3, 3]}
    verdicts = [cs.Verdict(item_id=item, criterion="q", rater=f"model:j~r{r + 1}", value=v)
                for item, row in values.items() for r, v in enumerate(row)]
    (found,) = self_consistency(verdicts)
    assert found.agreement == pytest.approx((1 + 2 / 3 + 2 / 3 + 1) / 4)
    assert found.pairwise == pytest.approx((1 + 1 / 3 + 1 / 3 + 1) / 4)  # one pair of three agrees on b, c
    matrix = [[values[item][r] for item in values] for r in range(3)]
    assert found.alpha == pytest.approx(krippendorff_alpha(matrix, level="ordinal"))
    assert base_rater("model:j~r12") == ("model:j", 12) and base_rater("model:j") == ("model:j", None)


@pytest.mark.slow
def test_repeats_from_the_cli_on_the_embedded_judge(tmp_path):
    out = tmp_path / "v.jsonl"
    result = CliRunner().invoke(cli, ["judge", "examples/survey_items.jsonl", "--criterion", "survey/effort",
                                      "--limit", "3", "--repeats", "3", "--pool", "median",
                                      "--store", str(tmp_path / "s.db"),
                                      "--out", str(out)], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 * 3 + 3 and {row["temperature"] for row in rows if "~r" in row["rater"]} == {0.7}
    (found,) = self_consistency([cs.Verdict.model_validate(row) for row in rows if "~r" in row["rater"]])
    assert "self-consistency" in result.output and f"agreeing {found.pairwise:.3f}" in result.output


def test_the_meta_evaluation_shows_self_consistency_beside_agreement_with_people():
    """Before: each repeat became a judge row of its own (``model:j~r1``, ``~r2`` ...) and the
    judge's noise was nowhere; now the pooled verdict is the judge's row and the repeats give
    its self-consistency."""
    values = {"a": (3, 3, 2), "b": (1, 1, 1), "c": (2, 3, 3), "d": (0, 1, 1), "e": (3, 3, 3)}
    people = {"a": 3, "b": 1, "c": 2, "d": 0, "e": 3}
    repeats = [cs.Verdict(item_id=item, criterion="effort", rater=f"model:j~r{k + 1}", value=found[k])
               for item, found in values.items() for k in range(3)]
    pooled = [cs.Verdict(item_id=item, criterion="effort", rater="panel:majority×3(model:j)",
                         value=max(set(found), key=found.count)) for item, found in values.items()]
    humans = [cs.Verdict(item_id=item, criterion="effort", rater=f"human:{who}", value=value + shift)
              for item, value in people.items() for who, shift in (("p1", 0), ("p2", 0))]
    study = cs.metaeval_study([*repeats, *pooled], humans, compare=True, n_resamples=200)
    assert {row.judge for row in study.rows} == {"panel:majority×3(model:j)"}
    assert study.self_consistency == tuple(self_consistency(repeats))
    (found,) = study.to_pandas("self_consistency").to_dict("records")
    assert found["judge"] == "model:j" and found["repeats"] == 3 and found["items"] == 5
    assert found["agreement"] == pytest.approx((2 / 3 + 1 + 2 / 3 + 2 / 3 + 1) / 5)
