"""Results, status, report and export computed from a campaign answered through the library."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from campaign_helpers import write_campaign
from click.testing import CliRunner

from convoscope.analysis import metaeval, read_ratings
from convoscope.campaigns import (
    Campaign,
    Submission,
    Task,
    VerdictImportError,
    export_verdicts,
    import_verdicts,
    invite,
    open_campaign,
    option_breakdown,
    render_campaign_report,
    system_results,
)
from convoscope.cli._campaign import campaign_group
from convoscope.criteria import load_suite
from convoscope.judges import Verdict

CRITERIA = {c.name: c for c in load_suite("response-candidates").criteria[:2]}


def _v(rater: str, item: str, value: int | None, system: str, options: tuple[str, ...] = ()) -> Verdict:
    return Verdict(item_id=item, criterion="appropriateness", rater=f"human:{rater}", value=value,
                   unscored_reason="idk" if value is None else None, system=system, options=options,
                   reason="unsure" if value is None else None)


def test_majority_and_all_votes_percentages() -> None:
    votes = [
        # bot-x, item 1: 1, 1, 0 -> majority appropriate; item 2: 0, idk -> tie, no majority
        _v("p", "x1", 1, "bot-x"), _v("q", "x1", 1, "bot-x"), _v("r", "x1", 0, "bot-x", ("incoherence",)),
        _v("p", "x2", 0, "bot-x", ("incoherence",)), _v("q", "x2", None, "bot-x"),
        # bot-y, one item: 0, 0 -> majority not appropriate
        _v("p", "y1", 0, "bot-y"), _v("q", "y1", 0, "bot-y", ("incoherence",)),
    ]
    rows = {row.system: row for row in system_results(votes, CRITERIA)}
    x, y = rows["bot-x"], rows["bot-y"]
    assert (x.candidates, x.votes) == (2, 5)
    assert x.majority == {"appropriate": 50.0, "no majority": 50.0}
    assert x.all_votes == pytest.approx({"appropriate": 40.0, "not appropriate": 40.0, "I don't know": 20.0})
    assert y.majority == {"not appropriate": 100.0} and y.all_votes == {"not appropriate": 100.0}
    breakdown = {(o.system, o.option): (o.count, o.negative_votes) for o in option_breakdown(votes, CRITERIA)}
    # bot-x: 3 negative votes (two 0s, one idk); incoherence chosen twice, the idk gave a note only.
    assert breakdown[("bot-x", "incoherence")] == (2, 3)
    assert breakdown[("bot-x", "(note only)")] == (1, 3)
    # bot-y: one 0 with incoherence, one 0 with neither an option nor a note.
    assert breakdown[("bot-y", "incoherence")] == (1, 2)
    assert breakdown[("bot-y", "(no explanation)")] == (1, 2)


def test_a_negative_answer_with_neither_option_nor_note_is_not_called_note_only() -> None:
    """Observed: a "not appropriate" with no option and no note was reported as "(note only)"."""
    bare = _v("p", "y1", 0, "bot-y")
    noted = _v("q", "y1", 0, "bot-y").model_copy(update={"reason": "It changes the subject."})
    blank = _v("r", "y1", 0, "bot-y").model_copy(update={"reason": "   "})
    ticked = _v("s", "y1", 0, "bot-y", ("incoherence",))
    found = option_breakdown([bare, noted, blank, ticked], CRITERIA)
    counts = {o.option: (o.count, o.negative_votes) for o in found}
    assert counts == {"(no explanation)": (2, 4), "(note only)": (1, 4), "incoherence": (1, 4)}


Choose = Callable[[Task], Submission]


def answer_everything(campaign: Campaign, person: str, choose: Choose) -> int:
    """Answer tasks as the web app would, until nothing is left; returns how many were answered."""
    count = 0
    while (work := campaign.work(person)).task is not None:
        campaign.submit(person, work.task, choose(work.task))
        count += 1
    return count


def _positive_unless_bot_y(task: Task) -> Submission:
    if task.candidate.system == "bot-y":
        option = "incoherence" if task.criterion == "appropriateness" else "genericness"
        return Submission(answer="0", options=(option,), seconds=30.0)
    return Submission(answer="1", seconds=30.0)


@pytest.fixture
def answered(tmp_path: Path) -> Campaign:
    directory = write_campaign(tmp_path / "study")
    people = invite(directory, 3)
    campaign = open_campaign(directory)
    campaign.record_external_id(people[0].id, "PROLIFIC5f3e9a")
    answer_everything(campaign, people[0].id, _positive_unless_bot_y)
    answer_everything(campaign, people[1].id, _positive_unless_bot_y)
    # The third disagrees everywhere: the opposite answer, always.
    answer_everything(campaign, people[2].id, lambda task: Submission(
        answer="1" if _positive_unless_bot_y(task).answer == "0" else "0", seconds=90.0))
    return campaign


def test_status_counts_time_and_batches(answered: Campaign) -> None:
    status = answered.status()
    rows = {row.batch: row for row in status.batches}
    # 2 per batch: a001 and a002 take both main batches, a003 is left with the qualification batch.
    assert (rows["batch-001"].started, rows["batch-001"].finished, rows["batch-001"].tasks) == (2, 2, 12)
    assert rows["qualification"].started == 3 and rows["qualification"].agreement is not None
    assert rows["batch-001"].median_minutes == pytest.approx(12 * 30 / 60)
    assert rows["batch-001"].agreement.fleiss_kappa == pytest.approx(1.0)
    people = {a.annotator: a for a in status.annotators}
    assert people["a001"].answers == 6 + 12 + 6 and people["a001"].batches_finished == 2
    assert people["a003"].minutes == pytest.approx(6 * 90 / 60)
    assert status.qualified == 3  # no reference annotators: everyone qualifies


def test_flagged_annotator_in_status(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "study")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("annotators_per_batch: 2", "annotators_per_batch: 4"))
    people = invite(directory, 4)
    campaign = open_campaign(directory)
    for person in people[:3]:
        answer_everything(campaign, person.id, _positive_unless_bot_y)
    answer_everything(campaign, people[3].id, lambda task: Submission(
        answer="1" if _positive_unless_bot_y(task).answer == "0" else "0"))
    rows = {row.batch: row for row in campaign.status().batches}
    assert rows["batch-001"].flagged == ("a004",) and rows["batch-002"].flagged == ("a004",)
    assert {a.annotator: a.flagged_in for a in campaign.status().annotators}["a004"] == (
        "batch-001", "batch-002")


def test_results_leave_out_qualification_and_count_the_reference(answered: Campaign) -> None:
    results, options = answered.results()
    by_key = {(r.system, r.criterion): r for r in results}
    assert set(by_key) == {(s, c) for s in ("bot-x", "bot-y", "reference")
                           for c in ("appropriateness", "contextualization")}
    # Main batches hold contexts c2, c3, c4 (c1 is the qualification): 3 candidates per system.
    assert by_key[("bot-y", "appropriateness")].candidates == 3
    assert by_key[("bot-y", "appropriateness")].majority == {"not appropriate": 100.0}
    assert by_key[("reference", "contextualization")].all_votes == {"contextualized": 100.0}
    assert {(o.system, o.criterion, o.option, o.count) for o in options} == {
        ("bot-y", "appropriateness", "incoherence", 6), ("bot-y", "contextualization", "genericness", 6)}


def test_report_fills_the_checklist_and_hides_platform_ids(answered: Campaign) -> None:
    html = render_campaign_report(answered)
    for heading in ("Evaluation granularity", "Quality dimensions", "Annotation format", "Sampling criteria",
                    "Qualification task and acceptance", "Annotators recruited", "Votes per sample",
                    "Inter-annotator agreement", "Workload per annotator", "Time to do the task", "Payment",
                    "Platform"):
        assert f"<th>{heading}" in html, heading
    assert "Is this response a sensible, natural continuation of the dialogue?" in html
    assert "<th>Annotators recruited (invited)</th><td>3</td>" in html
    assert "mean 2.0, min 2, max 2 votes per candidate" in html
    assert "at least 0.21" in html
    assert '<span class="missing">not stated: set reporting.payment in campaign.yaml</span>' in html
    assert "Fleiss&#39; kappa per main batch" in html and "mean 1.000" in html
    assert "<td>bot-y</td><td class=\"num\">3</td><td class=\"num\">6</td>" in html
    assert "PROLIFIC5f3e9a" not in html and "<svg" in html
    assert "<script" not in html.lower()


def test_export_jsonl_and_csv_feed_metaeval(answered: Campaign, tmp_path: Path) -> None:
    jsonl, table = tmp_path / "human.jsonl", tmp_path / "human.csv"
    count = export_verdicts(answered, jsonl)
    assert count == 2 * 12 + 2 * 6  # two people on each main batch: 12 + 6 answers each
    assert export_verdicts(answered, table, qualification=True) == count + 3 * 6
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert {row["rater"] for row in rows} == {"human:a001", "human:a002"}
    assert "PROLIFIC5f3e9a" not in jsonl.read_text() + table.read_text()
    assert len(list(csv.DictReader(table.open()))) == count + 18
    # A judge that says "appropriate" for every candidate, compared with the campaign by metaeval.
    judge = tmp_path / "judge.jsonl"
    judged = sorted({row["item_id"] for row in rows if row["criterion"] == "appropriateness"})
    judge.write_text("".join(json.dumps({"item_id": item, "criterion": "appropriateness",
                                         "rater": "model:always-yes", "value": 1}) + "\n" for item in judged))
    result = metaeval(read_ratings(judge), read_ratings(jsonl), criteria=["appropriateness"], seed=0)
    assert [row.judge for row in result] == ["model:always-yes"]
    assert result[0].n_items == 9
    with pytest.raises(ValueError, match=r"\.jsonl or a \.csv"):
        export_verdicts(answered, tmp_path / "human.txt")


def test_report_and_export_commands(answered: Campaign, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "report.html"
    result = runner.invoke(campaign_group, ["report", str(answered.directory), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Reporting checklist" in out.read_text(encoding="utf-8")
    exported = runner.invoke(campaign_group, ["export", str(answered.directory), "--out",
                                              str(tmp_path / "v.csv")])
    assert exported.exit_code == 0 and "wrote 36 verdicts" in exported.output
    status = runner.invoke(campaign_group, ["status", str(answered.directory)])
    assert status.exit_code == 0 and "3 invited, 3 qualified" in status.output


def test_import_checks_every_row_then_stores_new_ones(answered: Campaign, tmp_path: Path) -> None:
    exported = tmp_path / "all.csv"
    export_verdicts(answered, exported, qualification=True)  # main answers count once qualified
    target = write_campaign(tmp_path / "copy")  # the same study, an empty store
    invite(target, 3)  # the same people (answers of people never invited are refused)
    copy = open_campaign(target)
    summary = import_verdicts(copy, exported)
    assert (summary.rows, summary.added, summary.already_stored) == (54, 54, 0)
    assert import_verdicts(copy, exported).added == 0  # importing twice adds nothing
    assert copy.status().batches[1].agreement.fleiss_kappa == pytest.approx(1.0)
    assert copy.results() == answered.results()
    bad = tmp_path / "bad.jsonl"
    rows = [{"item_id": "c2-bot-x", "criterion": "appropriateness", "rater": "human:a003", "value": 1},
            {"item_id": "c2-bot-x", "criterion": "appropriateness", "rater": "human:a003", "value": None,
             "unscored_reason": "idk"}]
    bad.write_text("\n".join(json.dumps(row) for row in rows))
    before = len(copy.verdicts())
    with pytest.raises(VerdictImportError, match=r"bad.jsonl, line 2, field 'value': .*needs a short note"):
        import_verdicts(copy, bad)
    assert len(copy.verdicts()) == before  # nothing half-imported
    for change, field in (({"item_id": "nope"}, "item_id"), ({"criterion": "listening"}, "criterion"),
                          ({"rater": "model:x"}, "rater"), ({"value": 5}, "value")):
        bad.write_text(json.dumps({**rows[0], **change}))
        with pytest.raises(VerdictImportError, match=rf"line 1, field '{field}'"):
            import_verdicts(copy, bad)
    result = CliRunner().invoke(campaign_group, ["import", str(target), str(bad)])
    assert result.exit_code == 2 and "field'value'" in "".join(result.output.split())
