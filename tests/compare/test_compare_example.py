"""The documented example (examples/compare): two real runs that `compare` reads, pinned to scipy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy import stats

import convoscope as cs
from convoscope.cli._app import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "compare"


def values(name: str) -> dict[str, int]:
    rows = [json.loads(line) for line in (EXAMPLE / name).read_text(encoding="utf-8").splitlines()]
    return {row["item_id"]: row["value"] for row in rows}


def test_the_example_runs_compare_as_scipy_computes_them():
    a, b = values("smollm2-a.jsonl"), values("gemma-a.jsonl")
    shared = sorted(set(a) & set(b))
    comparison = cs.compare(
        EXAMPLE / "smollm2-a.jsonl",
        EXAMPLE / "gemma-a.jsonl",
        human=EXAMPLE / "human.jsonl",
        criteria=cs.load_criteria(EXAMPLE / "overall-a.yaml"),
    )
    row = comparison.criterion("overall")
    first, second = [a[i] for i in shared], [b[i] for i in shared]
    assert row.level == "ordinal" and row.n_items == len(shared) == 72
    assert row.pvalue == pytest.approx(stats.wilcoxon(second, first).pvalue, rel=1e-12)
    interval = stats.ttest_rel(second, first).confidence_interval()
    assert (row.change_low, row.change_high) == pytest.approx((interval.low, interval.high))
    assert row.human is not None and row.human.note  # SmolLM2 gave one value: no correlation, said so


def test_the_documented_command_writes_every_format(tmp_path):
    outs = [tmp_path / f"comparison.{suffix}" for suffix in ("md", "json", "html")]
    result = CliRunner().invoke(
        cli,
        [
            "compare",
            str(EXAMPLE / "gemma-a.jsonl"),
            str(EXAMPLE / "gemma-b.jsonl"),
            "--human",
            str(EXAMPLE / "human.jsonl"),
            "--criteria-file",
            str(EXAMPLE / "overall-a.yaml"),
            *[f"--out={out}" for out in outs],
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(outs[1].read_text())["criteria"][0]["criterion"] == "overall"
    assert "<table" in outs[2].read_text() and "| overall |" in outs[0].read_text()
