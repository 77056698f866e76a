"""Gold (attention) items are accounted for apart from the samples everywhere (issue 24, observations
1, 2 and 5): batch progress, finished counts, time, samples, candidates and the checklist."""

from __future__ import annotations

import json
from pathlib import Path

from campaign_helpers import answer_all, write_campaign

from convoscope.campaigns import Campaign, Submission, Task, invite, open_campaign, render_campaign_report

GOLD = {"id": "gold-1", "response": "Choose 'not appropriate' for this one.", "system": "check",
        "context": [{"speaker": "A", "text": "attention check"}],
        "meta": {"context_id": "g", "gold": {"appropriateness": "not appropriate"}}}


def _gold_study(directory: Path) -> Path:
    """The tiny study (1 qualification context, main batches of 2 contexts x 3 candidates x 2
    criteria) with one reference annotator and one gold context in every main batch."""
    write_campaign(directory, references=["a001"])
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + "attention:\n  per_batch: 1\n  max_failures: 0\n  action: block\n")
    with (directory / "items.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("\n" + json.dumps(GOLD))
    return directory


def _careful(task: Task) -> Submission:
    """Right on the gold item, 'bot-y is off' elsewhere, 30 s per answer."""
    wrong = task.candidate.system in ("bot-y", "check")
    return Submission(answer="0" if wrong else "1", seconds=30.0)


def _answered(tmp_path: Path) -> Campaign:
    directory = _gold_study(tmp_path / "study")
    people = invite(directory, 3)  # a001 is the reference; a002 and a003 qualify
    campaign = open_campaign(directory)
    for person in people:
        answer_all(campaign, person.id, _careful)
    return campaign


def test_gold_items_are_asked_only_on_the_criterion_they_check(tmp_path: Path) -> None:
    """Observed: 8 gold answers per person where 4 were needed (every criterion asked, one checked)."""
    directory = _gold_study(tmp_path / "study")
    invite(directory, 1)  # the reference annotator
    campaign = open_campaign(directory)
    batch = next(b for b in campaign.batches if b.kind == "main")
    gold_tasks = [t for t in campaign.tasks(batch) if t.candidate.item_id in batch.gold]
    asked = [(t.candidate.item_id, t.criterion) for t in gold_tasks]
    assert asked == [("gold-1@batch-001", "appropriateness")]
    assert len(campaign.tasks(batch)) == 2 * 3 * 2 + 1  # 12 sample tasks and one check


def test_finished_counts_time_and_workload_leave_gold_apart(tmp_path: Path) -> None:
    """Observed: with gold on, the dashboard showed 0/3/3, no median time and "0 batches finished"."""
    campaign = _answered(tmp_path)
    rows = {row.batch: row for row in campaign.status().batches}
    first = rows["batch-001"]
    assert (first.finished, first.started, first.wanted) == (2, 2, 2)
    assert (first.tasks, first.gold_tasks) == (12, 1)
    assert first.answers == 2 * 12  # the samples' answers; the checks are counted apart
    assert first.median_minutes == 13 * 30 / 60  # time on the whole batch, the check included
    people = {a.annotator: a for a in campaign.status().annotators}
    # Invited staff take every batch with room: both main batches, one check in each.
    assert people["a002"].batches_finished == people["a003"].batches_finished == 2
    assert people["a002"].gold_answers == 2 and people["a002"].gold_failed == 0


def test_report_counts_samples_and_exclusions_without_gold(tmp_path: Path) -> None:
    """Observed: qualified annotators' gold answers listed as "not counted (not qualified)", and gold
    counted as samples ("52 candidates for 16 contexts" where the truth was 48 for 12)."""
    campaign = _answered(tmp_path)
    html = render_campaign_report(campaign)
    assert "not counted" not in html
    assert "<th>Annotators excluded</th><td>none</td>" in html
    # Main batches: batch-001 holds c2, c3 and batch-002 holds c4 (3 candidates each) + 1 check each.
    assert "9 candidates for 3 contexts in 2 main batches" in html
    assert "2 gold contexts placed (2 checks)" in html
    # The dashboard's and the report's batch table: sample tasks and checks apart, both finished.
    assert "<td>batch-001</td><td>12 + 1 check</td><td>2/2/2</td>" in html
