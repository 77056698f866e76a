"""Who counts, and the protocol's smaller promises (issue 14): references out of main batches,
answers of people not invited / not qualified / blocked left out, gold checks, platforms,
placeholders, the interface catalogue."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from campaign_helpers import get, write_campaign
from click.testing import CliRunner

from convoscope.campaigns import (
    Campaign,
    Submission,
    Task,
    VerdictImportError,
    export_verdicts,
    import_verdicts,
    invite,
    open_campaign,
    read_annotators,
    render_campaign_report,
)
from convoscope.cli._campaign import campaign_group
from convoscope.web import build_server, join_secret, start_background


def _answer_all(campaign: Campaign, person: str, rule: Callable[[Task], str] = lambda task: "1") -> None:
    while (work := campaign.work(person)).task is not None:
        campaign.submit(person, work.task, Submission(answer=rule(work.task)))


def _bot_y_is_off(task: Task) -> str:
    return "0" if task.candidate.system == "bot-y" else "1"


def test_reference_annotators_stay_out_of_main_batches_unless_configured(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "s", references=["a001"])
    reference, candidate = invite(directory, 2)
    campaign = open_campaign(directory)
    _answer_all(campaign, reference.id, _bot_y_is_off)
    assert campaign.work(reference.id).state == "done"
    _answer_all(campaign, candidate.id, _bot_y_is_off)
    workers = {v.rater for v in campaign.answers() if campaign.owner[v.item_id].kind == "main"}
    assert workers == {"human:a002"}
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("kappa_threshold: 0.21", "kappa_threshold: 0.21\n"
                                             "  references_in_main: true"))
    assert open_campaign(directory).work(reference.id).batch.kind == "main"


def test_answers_of_people_not_qualified_never_count(tmp_path: Path) -> None:
    """Observed: raters who failed qualification entered batch agreement and majority votes."""
    directory = write_campaign(tmp_path / "s", references=["a001"])
    reference, good, bad = invite(directory, 3)
    campaign = open_campaign(directory)
    _answer_all(campaign, reference.id, _bot_y_is_off)
    _answer_all(campaign, good.id, _bot_y_is_off)
    _answer_all(campaign, bad.id, lambda task: "1" if _bot_y_is_off(task) == "0" else "0")
    assert campaign.work(bad.id).state == "not_qualified"
    # The failed candidate's main-batch answers arrive anyway, e.g. from a paper form.
    rows = [{"item_id": t.candidate.item_id, "criterion": t.criterion, "rater": f"human:{bad.id}",
             "value": 1} for t in campaign.tasks(campaign.batches[1])]
    paper = tmp_path / "paper.jsonl"
    paper.write_text("\n".join(json.dumps(row) for row in rows))
    assert import_verdicts(campaign, paper).added == len(rows)
    main = {v.rater for v in campaign.verdicts() if campaign.owner[v.item_id].kind == "main"}
    assert main == {f"human:{good.id}"}  # (the trial's answers stay, as the trial's record)
    row = next(r for r in campaign.status().batches if r.batch == "batch-001")
    assert row.started == 1 and row.agreement.annotators == (f"human:{good.id}",)
    results, _ = campaign.results()
    assert next(r for r in results if r.system == "bot-y").all_votes == {"not appropriate": 100.0}
    out = tmp_path / "human.jsonl"
    export_verdicts(campaign, out)
    assert f"human:{bad.id}" not in out.read_text()
    assert export_verdicts(campaign, tmp_path / "all.jsonl", everything=True) > export_verdicts(campaign, out)
    assert f"{bad.id}: {len(rows)} answers not counted (not qualified)" in render_campaign_report(campaign)


def test_import_refuses_raters_never_invited(campaign_dir: Path, tmp_path: Path) -> None:
    campaign = open_campaign(campaign_dir)
    invite(campaign_dir, 1)
    task = campaign.tasks(campaign.batches[1])[0]
    paper = tmp_path / "paper.jsonl"
    paper.write_text(json.dumps({"item_id": task.candidate.item_id, "criterion": task.criterion,
                                 "rater": "human:stranger", "value": 1}))
    with pytest.raises(VerdictImportError,
                       match=r"line 1, field 'rater': 'human:stranger' was never invited"):
        import_verdicts(campaign, paper)


def test_import_keeps_to_the_places_of_a_batch(tmp_path: Path) -> None:
    """Observed: an import put 5 raters on a batch that takes 3 (here: 2)."""
    directory = write_campaign(tmp_path / "s")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false"))
    invite(directory, 3)
    campaign = open_campaign(directory)
    batch = campaign.batches[0]
    rows = [{"item_id": t.candidate.item_id, "criterion": t.criterion, "rater": f"human:{person}",
             "value": 1} for person in ("a001", "a002", "a003") for t in campaign.tasks(batch)]
    paper = tmp_path / "paper.jsonl"
    paper.write_text("\n".join(json.dumps(row) for row in rows))
    third = 2 * len(campaign.tasks(batch)) + 1
    with pytest.raises(VerdictImportError, match=rf"line {third}, field 'rater': human:a003 would be one "
                                                 r"person too many on batch-001 \(annotators_per_batch: 2\)"):
        import_verdicts(campaign, paper)
    assert campaign.answers() == []  # nothing half-imported


def test_blocking_takes_answers_out_and_keeps_them(campaign_dir: Path) -> None:
    people = invite(campaign_dir, 2)
    campaign = open_campaign(campaign_dir)
    for person in people:
        _answer_all(campaign, person.id)
    counted = len(campaign.verdicts())
    runner = CliRunner()
    result = runner.invoke(campaign_group, ["block", str(campaign_dir), "a002", "--reason", "same note"])
    assert result.exit_code == 0, result.output
    time.sleep(0.3)  # another process's event is seen within a quarter second
    assert campaign.work("a002").state == "blocked"
    assert {v.rater for v in campaign.verdicts()} == {"human:a001"} and len(campaign.verdicts()) < counted
    assert len(campaign.answers()) == counted  # still in the store
    assert {a.annotator: a.blocked for a in campaign.status().annotators}["a002"] == "same note"
    runner.invoke(campaign_group, ["block", str(campaign_dir), "a002", "--unblock"])
    time.sleep(0.3)
    assert len(campaign.verdicts()) == counted
    unknown = runner.invoke(campaign_group, ["block", str(campaign_dir), "zz9"])
    assert unknown.exit_code == 2 and "no annotator 'zz9'" in unknown.output


def test_gold_rule_flag_keeps_the_annotator(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "s")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false")
                    + "attention:\n  per_batch: 1\n  max_failures: 0\n  action: flag\n")
    with (directory / "items.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("\n" + json.dumps({"id": "g1", "response": "Pick 'not appropriate' here.",
                                        "context": [{"speaker": "A", "text": "check"}],
                                        "meta": {"context_id": "g", "gold": {"appropriateness": 0}}}))
    [person] = invite(directory, 1)
    campaign = open_campaign(directory)
    assert [len(b.gold) for b in campaign.batches] == [1, 1]  # one check placed in each main batch
    assert campaign.batches[0].contexts[1].id == "g@batch-001"  # in the middle of the batch
    _answer_all(campaign, person.id)  # "appropriate" for the check too: a failure, only flagged
    status = {a.annotator: a for a in campaign.status().annotators}[person.id]
    assert status.gold_failed == 2 and status.blocked is None
    assert all("@" not in v.item_id for v in campaign.verdicts())  # checks never enter results
    report = render_campaign_report(campaign)
    assert "more than 0 failed check(s) → flag; 1 annotator(s) over the limit" in report


def test_status_says_qualification_off_and_report_flags_placeholders(campaign_dir: Path) -> None:
    spec = campaign_dir / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false")
                    + "reporting:\n  sampling: Native speakers recruited through ...; screened.\n")
    invite(campaign_dir, 2)
    open_campaign(campaign_dir)  # as `serve` does: the store exists
    result = CliRunner().invoke(campaign_group, ["status", str(campaign_dir)])
    assert result.exit_code == 0 and "2 invited, qualification off, 0 answers" in result.output
    html = render_campaign_report(open_campaign(campaign_dir))
    assert "unfilled placeholder in reporting.sampling" in html
    assert "<th>Annotators qualified</th><td>qualification off</td>" in html


def test_export_into_a_missing_folder_is_one_clear_line(campaign_dir: Path, tmp_path: Path) -> None:
    open_campaign(campaign_dir)
    target = tmp_path / "nowhere" / "human.csv"
    for command in (["export", str(campaign_dir), "--out", str(target)],
                    ["report", str(campaign_dir), "--out", str(tmp_path / "nowhere" / "r.html")]):
        result = CliRunner().invoke(campaign_group, command)
        assert result.exit_code == 2 and "does not exist; create it first" in result.output
        assert "Errno" not in result.output and len(result.output.strip().splitlines()) == 1


def test_platform_join_links(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "s")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + "platform:\n  kind: mturk\n  completion_code: DONE7\n")
    campaign = open_campaign(directory)
    assert campaign.spec.platform.redirect() is None  # MTurk: a form posted back, not a redirect
    server = build_server(campaign, port=0)
    stop = start_background(server)
    join = f"http://127.0.0.1:{server.server_port}/join/{join_secret(directory)}"
    try:
        preview = get(f"{join}?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1")
        assert preview.status_code == 200 and "Accept the HIT" in preview.text
        assert read_annotators(directory) == []  # a preview adds nobody
        assert get(f"{join}?workerId=W1&assignmentId=A1&turkSubmitTo=https://evil.example").status_code == 400
        arrived = get(f"{join}?workerId=W1&assignmentId=A1&hitId=H1&"
                      "turkSubmitTo=https://workersandbox.mturk.com")
        assert arrived.status_code == 303 and arrived.headers["location"].startswith("/a/")
        again = get(f"{join}?workerId=W1&assignmentId=A1&hitId=H1&turkSubmitTo=https://workersandbox.mturk.com")
        assert again.headers["location"] == arrived.headers["location"]  # the same person, resumed
        [person] = read_annotators(directory)
        assert (person.id, person.external_id, person.session["assignmentId"]) == ("p001", "W1", "A1")
        assert get(f"{join[:-3]}xyz?workerId=W2").status_code == 404
        with httpx.Client(timeout=30) as client:
            client.post(f"http://127.0.0.1:{server.server_port}{arrived.headers['location']}/start",
                        data={"csrf": _csrf(client, server.server_port, arrived.headers["location"])})
        _answer_all(campaign, person.id)
        done = get(f"http://127.0.0.1:{server.server_port}{arrived.headers['location']}")
        assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in done.text
        assert 'name="assignmentId" value="A1"' in done.text and "DONE7" in done.text
        assert "form-action 'self' https://workersandbox.mturk.com" in done.headers["content-security-policy"]
    finally:
        stop()


def _csrf(client: httpx.Client, port: int, path: str) -> str:
    import re

    page = client.get(f"http://127.0.0.1:{port}{path}").text
    return re.search(r'name="csrf" value="([^"]*)"', page).group(1)


def test_prolific_completion_defaults_to_prolifics_address(campaign_dir: Path) -> None:
    spec = campaign_dir / "campaign.yaml"
    spec.write_text(spec.read_text() + "platform:\n  kind: prolific\n  completion_code: C0DE42\n"
                    "  screen_out_code: SCR33N\n")
    assert open_campaign(campaign_dir).spec.platform.redirect() == (
        "https://app.prolific.com/submissions/complete?cc=C0DE42")


def test_korean_catalogue_covers_every_interface_string() -> None:
    """Every string the templates and the web code mark for translation has a Korean entry."""
    from babel.messages.extract import extract_from_dir
    from babel.messages.pofile import read_po

    import convoscope
    from convoscope.web._i18n import catalogue_path

    root = Path(convoscope.__file__).parent
    method_map = [("**/web/**.py", "python"), ("**/campaigns/_answers.py", "python"),
                  ("**/templates/web/**.html", "jinja2")]
    options = {"**/templates/web/**.html": {"extensions": "jinja2.ext.i18n"}}
    found = {message if isinstance(message, str) else message[0]
             for _, _, message, _, _ in extract_from_dir(root, method_map, options, keywords={
                 "_": None, "gettext": None, "N_": None})}
    assert len(found) > 40
    with catalogue_path("ko").open("rb") as handle:
        korean = {m.id: m.string for m in read_po(handle) if m.id}
    assert sorted(found - {k for k, v in korean.items() if v}) == []


def test_catalogue_loads_from_the_po_file_without_a_compiled_mo() -> None:
    from convoscope.web._i18n import catalogue_path, translations

    assert not catalogue_path("ko").with_suffix(".mo").exists()  # only the .po ships
    korean = translations("ko")
    assert korean.gettext("Save and next") == "저장하고 다음으로"
    assert korean.gettext("not appropriate") == "적절하지 않음"  # the criteria suite's words too
    assert translations("en").gettext("Save and next") == "Save and next"
    with pytest.raises(ValueError, match="no interface catalogue"):
        translations("xx")

