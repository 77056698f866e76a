"""The ``convoscope synth`` commands as a user runs them (no model needed for these)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from test_synth_curate import pool_items_and_verdicts
from test_synth_stats import dialogue

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import read_items, write_jsonl

_register()


def run(*args):
    result = CliRunner().invoke(cli, ["synth", *map(str, args)])
    result.flat = " ".join(result.output.split())  # rich wraps long messages
    return result


def test_contexts_command_writes_reproducible_contexts(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run("contexts", "--n", 3, "--languages", "en,pt,ko", "--out", first).exit_code == 0
    assert run("contexts", "--n", 3, "--languages", "en,pt,ko", "--out", second).exit_code == 0
    assert first.read_text() == second.read_text()
    rows = [json.loads(line) for line in first.read_text().splitlines()]
    assert len(rows) == 9 and {row["language"] for row in rows} == {"en", "pt", "ko"}


def test_contexts_command_reads_user_scenes_and_reports_bad_lines(tmp_path):
    scenes = tmp_path / "scenes.jsonl"
    scenes.write_text('{"id": 4, "text": "They found a stray kitten."}\n{"id": 5}\n')
    result = run("contexts", "--n", 1, "--scenes", scenes, "--out", tmp_path / "c.jsonl")
    assert result.exit_code == 2
    assert "scenes.jsonl, line 2, field 'text'" in result.flat


def test_dialogues_command_names_the_bad_contexts_line(tmp_path):
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text('{"id": "en-0001", "language": "en"}\n')
    result = run("dialogues", contexts, "--out", tmp_path / "d.jsonl")
    assert result.exit_code == 2 and "contexts.jsonl, line 1, field 'language_name'" in result.flat


def test_stats_command_prints_the_table(tmp_path):
    path = tmp_path / "dialogues.jsonl"
    write_jsonl([dialogue("1", "en", ["Any tips?", "Sleep early."]),
                 dialogue("2", "ko", ["요즘 피곤해요", "푹 쉬세요"])], path)
    result = run("stats", path, "--out", tmp_path / "stats.json")
    assert result.exit_code == 0, result.output
    assert "| en | 1 | 0 |" in result.output and "| ko | 1 | 0 |" in result.output
    assert [row["language"] for row in json.loads((tmp_path / "stats.json").read_text())] == ["en", "ko"]
    filtered = tmp_path / "filtered.jsonl"
    write_jsonl([dialogue("3", "ko", ["I am tired lately", "Rest well"], passed=False)], filtered)
    kept_only = run("stats", path, filtered)
    assert "| ko | 1 | 1 | 2.00 | 2.0 |" in kept_only.output
    everything = run("stats", path, filtered, "--include-filtered")
    assert "| ko | 1 | 1 | 2.00 | 2.5 |" in everything.output


def test_curate_command_writes_items_and_a_balance_summary(tmp_path):
    items, verdicts = pool_items_and_verdicts()
    dialogues, verdict_file = tmp_path / "dialogues.jsonl", tmp_path / "verdicts.jsonl"
    write_jsonl(items, dialogues)
    write_jsonl(verdicts, verdict_file)
    out = tmp_path / "benchmark.jsonl"
    result = run("curate", dialogues, "--verdicts", verdict_file, "--per-language", 6, "--out", out)
    assert result.exit_code == 0, result.output
    benchmark = read_items(out)  # the same items format `convoscope judge` and campaigns read
    assert len(benchmark) == 6 and all(item.meta["curation"]["stage"] for item in benchmark)
    summary = json.loads((tmp_path / "benchmark.summary.json").read_text())
    assert summary[0]["by_chatbot"] == {"A": 3, "B": 3}
    best = run("curate", dialogues, "--verdicts", verdict_file, "--per-language", 2, "--clean-pick", "best",
               "--out", out)
    assert best.exit_code == 0, best.output
    assert {item.meta["curation"]["stage"] for item in read_items(out)} == {"clean-top"}
    too_high = run("curate", dialogues, "--verdicts", verdict_file, "--clean-min-overall", 9, "--out", out)
    assert too_high.exit_code == 2 and "between 1 and 5" in too_high.flat
    csv_verdicts = tmp_path / "verdicts.csv"
    csv_verdicts.write_text("item_id\n")
    result = run("curate", dialogues, "--verdicts", csv_verdicts, "--out", out)
    assert result.exit_code == 2 and "as JSONL" in result.flat


def test_stats_accepts_missing_and_empty_files_with_a_note(tmp_path):
    """Observed: the README's `synth stats a.jsonl b.jsonl` failed "file not found" when nothing
    survived filtering (or nothing was filtered), so one of the two files was never written."""
    kept = tmp_path / "dialogues.jsonl"
    write_jsonl([dialogue("1", "en", ["Any tips?", "Sleep early."])], kept)
    missing, empty = tmp_path / "dialogues.filtered.jsonl", tmp_path / "empty.jsonl"
    empty.write_text("\n")
    result = run("stats", kept, missing, empty)
    assert result.exit_code == 0, result.output
    assert "| en | 1 | 0 |" in result.output
    assert f"{missing} does not exist" in result.flat and f"{empty} is empty" in result.flat
    nothing = run("stats", missing)
    assert nothing.exit_code == 0 and "No dialogues in the files given" in nothing.flat
