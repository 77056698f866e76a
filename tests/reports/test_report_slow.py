"""End to end on the real embedded model: a persona panel judges a KPI with relevance (chat
mode, max-vote), latency is computed from the log, and `convoscope report` shows exactly what
the verdict file holds. Slow: two real model calls."""

import json

import pytest
from click.testing import CliRunner
from tables import rows_by

from convoscope.cli import cli
from convoscope.cli._app import _register

pytestmark = pytest.mark.slow
_register()

TURN = {"id": "k1", "system": "car-assistant", "language": "en",
        "context": [{"speaker": "user", "text": "How do I turn on the seat heating?"}],
        "response": "Press the seat icon on the centre console; each press raises the level.",
        "meta": {"kpis": ["question-answering"],
                 "timestamps": ["2024-05-01T09:30:00Z", "2024-05-01T09:30:02.5Z"]}}
OTHER = {**TURN, "id": "k2", "meta": {"kpis": ["proactivity"], "timestamps": [100, 101]}}


def test_persona_panel_kpis_and_metrics_then_report(tmp_path):
    pytest.importorskip("llama_cpp")
    items = tmp_path / "qa.jsonl"
    items.write_text(json.dumps(TURN) + "\n" + json.dumps(OTHER) + "\n")
    out = tmp_path / "verdicts.jsonl"
    judged = CliRunner().invoke(cli, [
        "judge", str(items), "--kpi", "question-answering", "--kpi", "low-latency", "--mode", "chat",
        "--judge", "embedded", "--persona", "brand-ambassador", "--persona", "strict-rater",
        "--pool", "max-vote", "--max-tokens", "80", "--store", str(tmp_path / "s.db"), "--out", str(out),
        "--max-unscored", "1"])  # the tiny model's chat answers often cannot be read: not this test's point
    assert judged.exit_code == 0, judged.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    by_rater = {(row["item_id"], row["criterion"], row["rater"]): row for row in rows}
    members = ["model:embedded:smollm2#brand-ambassador", "model:embedded:smollm2#strict-rater"]
    # k2 is marked for another KPI: only its latency is measured; k1 gets both members and the pool
    assert {key for key in by_rater if key[0] == "k2"} == {("k2", "low-latency", "metric:latency")}
    for rater in [*members, "panel:majority"]:
        assert ("k1", "question-answering", rater) in by_rater
    assert by_rater[("k1", "low-latency", "metric:latency")]["value"] == 0  # 2.5 s > 2 s
    for rater in members:
        verdict = by_rater[("k1", "question-answering", rater)]
        if verdict["value"] is not None:  # the relevance flag the model gave is kept as given
            assert verdict["relevant"] is json.loads(verdict["raw"])["relevant"]
    report = tmp_path / "report.html"
    shown = CliRunner().invoke(cli, ["report", str(out), "--items", str(items), "--out", str(report)])
    assert shown.exit_code == 0, shown.output
    table = rows_by(report.read_text(encoding="utf-8"), "kpis", 0, 1)
    for rater in members:
        verdict = by_rater[("k1", "question-answering", rater)]
        expected_relevance = {True: "100%", False: "0%", None: "–"}[verdict["relevant"]]
        assert table[("question-answering", rater)][4] == expected_relevance
        unscored = "1" if verdict["value"] is None else "0"
        assert table[("question-answering", rater)][6] == unscored
    assert table[("low-latency", "metric:latency")][2:6] == ["2", "–", "–", "50%"]
