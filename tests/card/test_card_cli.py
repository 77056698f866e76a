"""``convoscope card``: files in, the card out as Markdown, JSON and HTML; bad input is one line
naming the file, line and field (exit 2) before any judging."""

from __future__ import annotations

import csv
import json

from click.testing import CliRunner

from convoscope.cli import cli

from .conftest import study

JUDGE_MODULE = '''
from convoscope.judges import python_judge

@python_judge(name="knows", version="1")
def knows(item, criterion):
    return item.meta.get("quality", 3)
'''
CRITERIA = """\
name: overall
question: How good is the response?
definition: Overall quality of the response, 1 very poor to 5 very good.
scale: {kind: range, minimum: 1, maximum: 5}
"""


def _files(tmp_path):
    items, humans = study(n_contexts=12)
    (tmp_path / "items.jsonl").write_text("".join(item.model_dump_json() + "\n" for item in items),
                                          encoding="utf-8")
    with (tmp_path / "human.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "criterion", "rater", "value"])
        writer.writerows([r.item_id, r.criterion, r.rater.removeprefix("human:"), r.value] for r in humans)
    (tmp_path / "overall.yaml").write_text(CRITERIA, encoding="utf-8")
    (tmp_path / "card_judges.py").write_text(JUDGE_MODULE, encoding="utf-8")
    return ["--items", str(tmp_path / "items.jsonl"), "--human", str(tmp_path / "human.csv"),
            "--criteria", str(tmp_path / "overall.yaml"), "--store", str(tmp_path / "card.db"),
            "--resamples", "200"]


def test_the_command_writes_the_card_in_three_forms(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    options = _files(tmp_path)
    outs = [tmp_path / name for name in ("card.md", "card.json", "card.html")]
    result = CliRunner().invoke(cli, ["card", "python:card_judges:knows", "baseline:length", *options,
                                      "--languages", "en,ko", *[a for o in outs for a in ("--out", str(o))]])
    assert result.exit_code == 0, result.output
    data = json.loads(outs[1].read_text(encoding="utf-8"))
    assert [j["judge"] for j in data["judges"]] == ["python:card_judges:knows", "baseline:length"]
    assert data["languages"] == ["en", "ko"] and data["n_rated_items"] == 36 and data["n_annotators"] == 3
    markdown = outs[0].read_text(encoding="utf-8")
    assert markdown.count("**Verdict.**") == 2 and "## Thresholds of the verdict" in markdown
    side = markdown.split("## Side by side", 1)[1].split("\n## ", 1)[0]
    assert "| python:card_judges:knows | overall |" in side and "| baseline:length | overall |" in side
    assert "<svg" in outs[2].read_text(encoding="utf-8")


def test_markdown_goes_to_standard_output_without_out(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(cli, ["card", "baseline:length", *_files(tmp_path), "--no-probes",
                                      "--pairs", "0"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("# Judge card") and "manipulation: probes not asked" in result.output


def test_bad_input_is_one_line_and_exit_2_before_judging(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    options = _files(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,criterion,rater,value\nc00-alpha,overall,,4\n", encoding="utf-8")
    human_at = options.index("--human") + 1
    cases = [
        ([*options[:human_at], str(bad), *options[human_at + 1:]], f"{bad}, line 2, field 'rater': is empty"),
        ([*options, "--out", str(tmp_path / "card.txt")], "the card is written as .md, .json, .html"),
        ([*options, "--family", "knows"], "write JUDGE=SYSTEM,SYSTEM"),
    ]
    for arguments, message in cases:
        result = CliRunner().invoke(cli, ["card", "python:card_judges:knows", *arguments])
        assert result.exit_code == 2, result.output
        assert message in result.output and len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "card.db").exists()
