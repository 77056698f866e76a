"""The curated benchmark is a human-evaluation campaign's input as it stands: one format."""

from __future__ import annotations

from pathlib import Path

from test_synth_curate import pool_items_and_verdicts

from convoscope.campaigns import invite, open_campaign
from convoscope.items import write_jsonl
from convoscope.synth import curate

SPEC = """\
name: medal-study
granularity: dialogue
criteria:
  - dialogue-issues:repetitive
  - dialogue-issues:irrelevant
contexts_per_batch: 2
annotators_per_batch: 3
items: benchmark.jsonl
store: study.db
qualification:
  enabled: true
  contexts: 2
"""


def test_a_curated_benchmark_opens_as_a_dialogue_campaign(tmp_path: Path) -> None:
    items, verdicts = pool_items_and_verdicts()
    chosen, _ = curate(items, verdicts, per_language=6, seed=0)
    write_jsonl(chosen, tmp_path / "benchmark.jsonl")
    (tmp_path / "campaign.yaml").write_text(SPEC, encoding="utf-8")
    campaign = open_campaign(tmp_path)
    judged = [candidate.item_id for batch in campaign.batches for context in batch.contexts
              for candidate in context.candidates]
    assert sorted(judged) == sorted(item.id for item in chosen)  # every dialogue, once
    assert [batch.kind for batch in campaign.batches] == ["qualification", "main", "main"]
    annotator = invite(tmp_path, 1)[0]
    work = campaign.work(annotator.id)
    assert work.task is not None and work.task.criterion == "repetitive"
    assert work.task.candidate.system in {"A", "B"}  # the chatbot travels with the dialogue
