"""Library units: spec validation, batching, task order, answers, qualification, agreement."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from campaign_helpers import write_campaign

from convoscope.campaigns import (
    AnswerError,
    CampaignError,
    Submission,
    batch_agreement,
    choose_batch,
    init_campaign,
    invite,
    load_campaign,
    make_batches,
    open_campaign,
    qualify,
    read_annotators,
    to_verdict,
)
from convoscope.criteria import load_suite
from convoscope.items import read_items
from convoscope.judges import Verdict


def test_init_writes_a_valid_template(tmp_path: Path) -> None:
    init_campaign(tmp_path / "My Study")
    spec = load_campaign(tmp_path / "My Study")
    assert spec.name == "my-study"
    assert (spec.contexts_per_batch, spec.annotators_per_batch) == (10, 7)
    assert (spec.qualification.min_kappa, spec.qualification.min_accuracy) == (0.21, 0.6)
    with pytest.raises(CampaignError, match="already exists"):
        init_campaign(tmp_path / "My Study")


def test_errors_name_line_and_field(campaign_dir: Path) -> None:
    path = campaign_dir / "campaign.yaml"
    path.write_text(path.read_text().replace("contexts_per_batch: 2", "contexts_per_batch: zero"))
    with pytest.raises(CampaignError) as caught:
        load_campaign(campaign_dir)
    assert caught.value.line == 5 and caught.value.field == "contexts_per_batch"
    assert "campaign.yaml:5" in str(caught.value)


def test_unknown_field_and_unknown_criterion(campaign_dir: Path) -> None:
    path = campaign_dir / "campaign.yaml"
    text = path.read_text()
    path.write_text(text + "batchsize: 3\n")
    with pytest.raises(CampaignError, match="unknown field"):
        load_campaign(campaign_dir)
    path.write_text(text.replace("response-candidates:contextualization", "response-candidates:nope"))
    with pytest.raises(CampaignError) as caught:
        load_campaign(campaign_dir)
    assert caught.value.line == 4 and caught.value.field == "criteria.1"


def test_batches_and_task_order(campaign_dir: Path) -> None:
    spec = load_campaign(campaign_dir)
    batches = make_batches(read_items(campaign_dir / "items.jsonl"), spec)
    assert [(b.id, b.kind, len(b.contexts)) for b in batches] == [
        ("qualification", "qualification", 1), ("batch-001", "main", 2), ("batch-002", "main", 1)]
    # Each context has its two systems plus the ground-truth reference, once.
    assert [c.system for c in batches[1].contexts[0].candidates] == ["bot-x", "bot-y", "reference"]
    tasks = batches[1].tasks(["appropriateness", "contextualization"])
    order = [(t.context_id, t.criterion, t.candidate.system) for t in tasks]
    assert order[:6] == [("c2", "appropriateness", "bot-x"), ("c2", "appropriateness", "bot-y"),
                         ("c2", "appropriateness", "reference"), ("c2", "contextualization", "bot-x"),
                         ("c2", "contextualization", "bot-y"), ("c2", "contextualization", "reference")]
    assert order[6][0] == "c3"


def test_choose_batch_resumes_then_fills(campaign_dir: Path) -> None:
    spec = load_campaign(campaign_dir)
    batches = make_batches(read_items(campaign_dir / "items.jsonl"), spec)
    full = {"batch-001": {"p", "q"}}
    assert choose_batch("r", batches, full, set(), per_batch=2).id == "batch-002"
    assert choose_batch("p", batches, full, set(), per_batch=2).id == "batch-001"
    assert choose_batch("p", batches, full, {"batch-001", "batch-002"}, per_batch=2) is None


def _task(campaign_dir: Path):
    batches = make_batches(read_items(campaign_dir / "items.jsonl"), load_campaign(campaign_dir))
    return batches[0].tasks(["appropriateness"])[0]


def test_answers_become_human_verdicts(campaign_dir: Path) -> None:
    criterion = load_suite("response-candidates").get("appropriateness")
    task = _task(campaign_dir)
    verdict = to_verdict(task, criterion, "a001", Submission(answer="0", options=("incoherence",)))
    assert (verdict.rater, verdict.value, verdict.options) == ("human:a001", 0, ("incoherence",))
    idk = to_verdict(task, criterion, "a001", Submission(answer="idk", reason="half fits"))
    assert (idk.value, idk.unscored_reason, idk.reason) == (None, "idk", "half fits")
    with pytest.raises(AnswerError, match="note"):
        to_verdict(task, criterion, "a001", Submission(answer="idk", reason="  "))
    with pytest.raises(AnswerError, match="do not apply"):
        to_verdict(task, criterion, "a001", Submission(answer="1", options=("incoherence",)))
    with pytest.raises(AnswerError):
        to_verdict(task, criterion, "a001", Submission(answer="7"))


def _v(rater: str, item: str, value: int | None) -> Verdict:
    return Verdict(item_id=item, criterion="appropriateness", rater=f"human:{rater}", value=value,
                   unscored_reason="idk" if value is None else None)


REFERENCE = [1, 0, 1, 1, 0, 0, 1, 0]


def test_qualification_by_kappa_threshold() -> None:
    votes = [_v(rater, f"i{k}", value) for rater in ("ref1", "ref2") for k, value in enumerate(REFERENCE)]
    good = [_v("good", f"i{k}", value) for k, value in enumerate(REFERENCE)]
    bad = [_v("bad", f"i{k}", 1 - value) for k, value in enumerate(REFERENCE)]
    passed = qualify("good", votes + good, ["ref1", "ref2"], threshold=0.21)
    failed = qualify("bad", votes + bad, ["ref1", "ref2"], threshold=0.21)
    assert passed.qualified and passed.kappa == pytest.approx(1.0)
    assert not failed.qualified and failed.kappa < 0.21
    assert qualify("anyone", [], [], threshold=0.21).qualified


def test_batch_agreement_uses_fleiss_and_strong() -> None:
    votes = [_v(rater, f"i{k}", value) for rater in ("p", "q", "r") for k, value in enumerate(REFERENCE)]
    result = batch_agreement("batch-001", votes + [_v("p", "i9", None), _v("q", "i9", 1)])
    assert result.annotators == ("human:p", "human:q", "human:r")
    assert result.strong_kappa == pytest.approx(1.0)
    assert result.fleiss_kappa is not None and result.fleiss_kappa < 1.0
    assert batch_agreement("b", votes[:8]).note == "fewer than two annotators so far"


def test_campaign_flow_qualifies_then_assigns(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "s", references=["a001"])
    reference, annotator = invite(directory, 2)
    assert [a.id for a in read_annotators(directory)] == ["a001", "a002"]
    campaign = open_campaign(directory)
    for person, flip in ((reference.id, False), (annotator.id, True)):
        while (work := campaign.work(person)).batch is not None and work.batch.kind == "qualification":
            value = "0" if (work.done % 2 == 0) != flip else "1"
            campaign.submit(person, work.task, Submission(answer=value))
    assert campaign.work(reference.id).state == "done"  # references stay out of main batches
    failed = campaign.work(annotator.id)
    assert failed.task is None and failed.qualification is not None and not failed.qualification.qualified


def test_answers_written_by_another_process_are_seen(campaign_dir: Path) -> None:
    """Another process's answers (`campaign import`, a second server) are seen within a quarter of
    a second: the store is asked at most that often, not on every request (issue 24: reading it on
    every request made PostgreSQL slower than SQLite under load)."""
    first, second = open_campaign(campaign_dir), open_campaign(campaign_dir)  # two servers, one store
    assert first.work("a001").done == 0 and second.work("a001").done == 0  # both have read the store
    first.submit("a001", first.work("a001").task, Submission(answer="1"))
    assert first.work("a001").done == 1  # a process sees its own answers at once
    time.sleep(0.3)
    assert second.work("a001").done == 1
    second.submit("a001", second.work("a001").task, Submission(answer="0"))
    time.sleep(0.3)
    assert first.work("a001").done == 2
    assert [v.value for v in first.answers()] == [v.value for v in second.answers()] == [1, 0]


def test_dialogue_granularity(campaign_dir: Path) -> None:
    path = campaign_dir / "campaign.yaml"
    text = path.read_text()
    path.write_text(text.replace("name: tiny-study", "name: tiny-study\ngranularity: dialogue"))
    with pytest.raises(CampaignError) as caught:  # the response-candidates criteria judge one turn
        load_campaign(campaign_dir)
    assert caught.value.field == "criteria.0" and "granularity is 'dialogue'" in str(caught.value)
    path.write_text(text.replace("name: tiny-study", "name: tiny-study\ngranularity: dialogue").replace(
        "response-candidates:appropriateness", "dialogue-issues:repetitive").replace(
        "response-candidates:contextualization", "dialogue-issues:incoherent"))
    batches = make_batches(read_items(campaign_dir / "items.jsonl"), load_campaign(campaign_dir))
    # Each of the 8 items is one dialogue: 1 for qualification, then batches of 2.
    assert [len(b.contexts) for b in batches] == [1, 2, 2, 2, 1]
    first = batches[0].contexts[0]
    assert [c.item_id for c in first.candidates] == ["c1-bot-x"] and first.turns[-1].speaker == "response"


def test_own_criteria_from_a_file_next_to_the_campaign(campaign_dir: Path) -> None:
    (campaign_dir / "mine.yaml").write_text("""\
suite: mine
criteria:
  - name: politeness
    question: Is the reply polite?
    definition: Courteous wording, no rudeness.
    scale: {kind: binary, labels: [polite, rude], allow_idk: true}
    options:
      - {name: sarcasm, description: Mocks the other speaker., when: [rude]}
""")
    path = campaign_dir / "campaign.yaml"
    text = path.read_text()
    path.write_text(text.replace("  - response-candidates:contextualization\n", "  - politeness\n")
                    + "criteria_files: [missing.yaml]\n")
    with pytest.raises(CampaignError) as caught:
        load_campaign(campaign_dir)
    assert caught.value.field == "criteria_files.0" and "not found" in str(caught.value)
    path.write_text(text.replace("  - response-candidates:contextualization\n", "  - politeness\n")
                    + "criteria_files: [mine.yaml]\n")
    campaign = open_campaign(campaign_dir)
    assert list(campaign.criteria) == ["appropriateness", "politeness"]
    task = next(t for t in campaign.tasks(campaign.batches[0]) if t.criterion == "politeness")
    verdict = campaign.submit("a001", task, Submission(answer="0", options=("sarcasm",)))
    assert (verdict.criterion, verdict.value, verdict.options) == ("politeness", 0, ("sarcasm",))


def test_times_and_an_empty_main_phase_are_refused(campaign_dir: Path) -> None:
    path = campaign_dir / "campaign.yaml"
    text = path.read_text()
    path.write_text(text + "expected_minutes_per_batch: 30\nmax_minutes_per_batch: 20\n")
    with pytest.raises(CampaignError, match="at least expected_minutes_per_batch"):
        load_campaign(campaign_dir)
    path.write_text(text.replace("  contexts: 1", "  contexts: 4"))
    with pytest.raises(CampaignError, match="give 4 contexts .* nothing is left for main batches"):
        open_campaign(campaign_dir)
