"""People judging pairs: a pairwise campaign shows two responses to one context and asks which is
better. Its answers are pairwise verdicts that convoscope.pairwise reads as it reads a judge's.

Before this, ``pairwise: true`` in campaign.yaml was refused as an unknown field, and a campaign
could only ask for one candidate at a time."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from campaign_helpers import write_campaign

from convoscope.campaigns import (
    AnswerError,
    Campaign,
    CampaignError,
    Submission,
    Task,
    export_verdicts,
    invite,
    load_campaign,
    open_campaign,
    pair_contexts,
    pair_order,
    render_campaign_report,
    shown_slot,
)
from convoscope.items import read_items
from convoscope.judges import read_verdicts
from convoscope.pairwise import bradley_terry, make_pairs, outcomes, win_rates


def _pairwise(directory: Path, extra: str = "") -> Path:
    write_campaign(directory)
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + "pairwise: true\n" + extra, encoding="utf-8")
    return directory


@pytest.fixture
def pair_dir(tmp_path: Path) -> Path:
    return _pairwise(tmp_path / "pairs")


def _answer_for(annotator: str, task: Task, winner: str) -> str:
    """The form value that names ``winner`` ("tie" for a tie) in the order this person sees."""
    if winner == "tie":
        return "tie"
    first, _ = pair_order(annotator, task.candidate)
    return "1" if first.system == winner else "2"


RANK = {"reference": 0, "bot-x": 1, "bot-y": 2}  # the better system wins


def _finish(campaign: Campaign, annotator: str, choose=None) -> int:  # noqa: ANN001
    """Answer every task offered to ``annotator``; ``choose(task) -> form value`` (default: the better)."""
    count = 0
    while (work := campaign.work(annotator)).task is not None:
        task = work.task
        a, b = (side.system for side in task.candidate.pair)
        answer = choose(task) if choose else _answer_for(annotator, task, min((a, b), key=RANK.get))
        campaign.submit(annotator, task, Submission(answer=answer))
        count += 1
    return count


def _answered(directory: Path, *choosers) -> tuple[Campaign, list[str]]:  # noqa: ANN002
    """A campaign whose invited people (one per chooser; None: the better system wins) finished."""
    campaign = open_campaign(directory)
    people = [p.id for p in invite(directory, len(choosers))]
    for person, choose in zip(people, choosers, strict=True):
        _finish(campaign, person, choose)
    return campaign, people


def test_pairs_as_make_pairs_builds_them_with_the_reference_as_a_system(pair_dir: Path) -> None:
    campaign = open_campaign(pair_dir)
    assert list(campaign.criteria) == ["pairwise:appropriateness", "pairwise:contextualization"]
    main = campaign.batches[1]
    candidates = main.contexts[0].candidates
    assert [c.system for c in candidates] == ["bot-x~bot-y", "bot-x~reference", "bot-y~reference"]
    assert [c.item_id for c in candidates] == ["c2:bot-x~bot-y", "c2:bot-x~reference", "c2:bot-y~reference"]
    # The same ids as a judge's pairs, so people's and models' verdicts line up item by item.
    items = read_items(pair_dir / "items.jsonl")
    assert {p.id for p in make_pairs(items)} >= {"c2:bot-x~bot-y"}
    first = candidates[0].pair
    assert first is not None and [s.item_id for s in first] == ["c2-bot-x", "c2-bot-y"]
    assert first[0].text == "bot-x says hi to context 2"
    assert candidates[1].pair[1].text == "gold turn 2"  # the ground-truth turn as the system "reference"
    # Two criteria x three pairs per context.
    assert len(campaign.tasks(main)) == 2 * 3 * len(main.contexts)


def test_pair_systems_limits_the_systems(tmp_path: Path) -> None:
    directory = _pairwise(tmp_path / "p", "include_reference: false\npair_systems: [bot-x, bot-y]\n")
    campaign = open_campaign(directory)
    assert {c.system for b in campaign.batches for x in b.contexts for c in x.candidates} == {"bot-x~bot-y"}


def test_order_is_drawn_per_annotator_kept_and_recorded(pair_dir: Path) -> None:
    campaign = open_campaign(pair_dir)
    pair = campaign.batches[1].contexts[0].candidates[0]
    orders = Counter(pair_order(f"a{n:03d}", pair)[0].system for n in range(1, 41))
    assert set(orders) == {"bot-x", "bot-y"} and min(orders.values()) >= 10  # both orders, near half each
    assert pair_order("a007", pair) == pair_order("a007", pair)  # the same on every page load
    people = invite(pair_dir, 2)
    task = campaign.work(people[0].id).task
    assert task is not None and task.candidate.pair is not None
    first, second = pair_order(people[0].id, task.candidate)
    verdict = campaign.submit(people[0].id, task, Submission(answer="2"))
    assert verdict.value == second.system  # "2" names the response shown second to this person
    assert verdict.criterion == "pairwise:appropriateness" and verdict.system == task.candidate.system
    assert shown_slot(verdict) == (first.system, "second")
    assert json.loads(verdict.raw or "{}")["shown_first"] == first.system


def test_answers_a_pair_takes(pair_dir: Path) -> None:
    campaign = open_campaign(pair_dir)
    person = invite(pair_dir, 1)[0].id
    task = campaign.work(person).task
    assert task is not None
    with pytest.raises(AnswerError, match="Choose one of the answers"):
        campaign.submit(person, task, Submission(answer="1.5"))
    with pytest.raises(AnswerError, match="needs a short note"):
        campaign.submit(person, task, Submission(answer="idk"))
    with pytest.raises(AnswerError, match="do not apply"):
        campaign.submit(person, task, Submission(answer="1", options=("off-topic",)))
    tie = campaign.submit(person, task, Submission(answer="tie", reason="both fine"))
    assert (tie.value, tie.unscored_reason) == ("tie", None)
    unsure = campaign.submit(person, campaign.work(person).task,
                             Submission(answer="idk", reason="can't tell"))
    assert (unsure.value, unsure.unscored_reason) == (None, "idk")


def test_export_is_read_by_the_pairwise_statistics(pair_dir: Path, tmp_path: Path) -> None:
    campaign, _ = _answered(pair_dir, None, None)
    out = tmp_path / "people.jsonl"
    written = export_verdicts(campaign, out)
    verdicts = read_verdicts(out)
    assert written == len(verdicts) > 0
    assert all(v.criterion.startswith("pairwise:") and v.rater.startswith("human:") for v in verdicts)
    assert all("~" in (v.system or "") and v.value in v.system.split("~") for v in verdicts)
    results = outcomes(verdicts)
    table = {row.system: row for row in win_rates(results, n_resamples=200)}
    assert table["reference"].rate == 1.0 and table["bot-y"].rate == 0.0  # what the people said
    assert table["bot-x"].rate == pytest.approx(0.5)
    ranking = [s.system for s in bradley_terry(results, n_resamples=0)]
    assert ranking == ["reference", "bot-x", "bot-y"]
    csv_out = tmp_path / "people.csv"
    export_verdicts(campaign, csv_out)
    assert len(outcomes(read_verdicts(csv_out))) == len(results)  # the CSV reads back the same


def test_agreement_and_results_of_a_pairwise_campaign(pair_dir: Path) -> None:
    campaign, people = _answered(pair_dir, None, lambda task: "1")  # the 2nd: always the first shown
    batch = next(row for row in campaign.status().batches if row.batch == "batch-001")
    assert batch.agreement is not None and batch.agreement.fleiss_kappa is not None
    assert -1.0 <= batch.agreement.fleiss_kappa < 1.0  # "always first" disagrees with the other person
    assert campaign.results() == ([], [])  # the absolute-answer tables do not apply to pairs
    rows = campaign.pair_results(n_resamples=200)
    assert [r.criterion for r in rows] == ["pairwise:appropriateness", "pairwise:contextualization"]
    row = rows[0]
    assert row.votes == 2 * row.pairs and row.idk == 0
    assert [w.system for w in row.all_votes][0] == "reference"
    sides = {s.annotator: s for s in row.sides}
    assert sides[people[1]].share == 1.0 and sides[people[1]].p_value < 0.05
    assert sides["all"].decisive == row.votes - row.ties
    # The first person's choices follow the systems, not the screen: near half on the left.
    assert 0.0 < sides[people[0]].share < 1.0


def test_gold_pairs_block_a_person_who_picks_the_worse_response(tmp_path: Path) -> None:
    directory = _pairwise(tmp_path / "g", "attention:\n  per_batch: 1\n  max_failures: 0\n")
    items = directory / "items.jsonl"
    gold = [{"id": f"g-{s}", "system": s, "context": [{"speaker": "A", "text": "What is 2 + 2?"}],
             "response": text, "meta": {"context_id": "g", "gold": {"appropriateness": "bot-x"}}}
            for s, text in (("bot-x", "Four."), ("bot-y", "Bananas are yellow."))]
    items.write_text(items.read_text() + "\n" + "\n".join(json.dumps(g) for g in gold), encoding="utf-8")
    campaign = open_campaign(directory)
    placed = [c for x in campaign.batches[1].contexts for c in x.candidates if c.item_id.startswith("g:")]
    assert [c.item_id for c in placed] == ["g:bot-x~bot-y@batch-001"]
    assert campaign.batches[1].gold == {"g:bot-x~bot-y@batch-001": {"pairwise:appropriateness": "bot-x"}}
    good, careless = (p.id for p in invite(directory, 2))
    _finish(campaign, good, lambda task: _answer_for(good, task, "bot-x") if task.context_id.startswith("g")
            else "tie")
    assert good not in campaign.standing().blocked
    _finish(campaign, careless, lambda task: _answer_for(careless, task, "bot-y"))
    assert careless in campaign.standing().blocked
    assert campaign.gold_failures(careless) == [("g:bot-x~bot-y@batch-001", "pairwise:appropriateness")]


def test_spec_errors_name_the_field(tmp_path: Path) -> None:
    directory = _pairwise(tmp_path / "d", "granularity: dialogue\n")
    with pytest.raises(CampaignError) as caught:
        load_campaign(directory)
    assert caught.value.field == "pairwise" and "granularity: turn" in str(caught.value)
    directory = write_campaign(tmp_path / "e")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + "pair_systems: [bot-x]\n", encoding="utf-8")
    with pytest.raises(CampaignError) as caught:
        load_campaign(directory)
    assert caught.value.field == "pair_systems" and caught.value.line is not None


def test_report_shows_win_rates_and_side_preference(pair_dir: Path) -> None:
    campaign, _ = _answered(pair_dir, None, lambda task: "1")
    html = render_campaign_report(campaign)
    assert "Win rates" in html and "Bradley" in html
    assert "chose the response shown first" in html
    assert "Why answers were negative" not in html  # absolute-answer sections stay out


def test_people_and_a_pairwise_judge_in_one_metaeval_table(pair_dir: Path, tmp_path: Path) -> None:
    """The export joins a judge's pairwise verdicts item by item: Cohen's kappa with the majority."""
    from sklearn.metrics import cohen_kappa_score

    import convoscope as cs
    from convoscope.judges import Verdict

    campaign, _ = _answered(pair_dir, None, None)
    out = tmp_path / "people.jsonl"
    export_verdicts(campaign, out)
    people = [v for v in read_verdicts(out) if v.criterion == "pairwise:appropriateness"]
    majority = {v.item_id: v.value for v in people}  # both people follow RANK, so they agree
    # A judge that prefers bot-y to bot-x (wrong there) and is right about the reference.
    judge = [Verdict(item_id=item, criterion="pairwise:appropriateness", rater="model:scripted-pairs",
                     system=item.split(":")[1], value="bot-y" if item.endswith("bot-x~bot-y") else winner)
             for item, winner in majority.items()]
    [row] = cs.metaeval(judge, people, n_resamples=50)
    assert row.judge == "model:scripted-pairs" and row.n_items == len(majority)
    said = {v.item_id: v.value for v in judge}
    expected = cohen_kappa_score([majority[i] for i in sorted(majority)], [said[i] for i in sorted(majority)])
    assert row.kappa == pytest.approx(expected)
    assert row.humans.alpha == pytest.approx(1.0)


def test_pair_answers_collected_elsewhere_are_imported(pair_dir: Path, tmp_path: Path) -> None:
    """An export re-imported keeps the order each person saw; a paper form has no order to keep."""
    from convoscope.campaigns import VerdictImportError, import_verdicts

    campaign, _ = _answered(pair_dir, None, None)
    exported = tmp_path / "pairs.csv"
    export_verdicts(campaign, exported, qualification=True)
    target = _pairwise(tmp_path / "copy")
    invite(target, 2)
    copy = open_campaign(target)
    summary = import_verdicts(copy, exported)
    assert summary.added == summary.rows == len(campaign.verdicts())
    copy.decide_pending()  # main-batch answers count once the qualification is decided
    assert sorted((v.item_id, v.rater, v.value, v.raw) for v in copy.verdicts()) == sorted(
        (v.item_id, v.rater, v.value, v.raw) for v in campaign.verdicts())
    paper = tmp_path / "paper.jsonl"
    row = {"item_id": "c2:bot-x~bot-y", "criterion": "pairwise:contextualization", "rater": "human:a002",
           "value": "bot-y"}
    fresh = open_campaign(_pairwise(tmp_path / "paper-study"))
    invite(fresh.directory, 2)
    paper.write_text(json.dumps(row))
    import_verdicts(fresh, paper)
    [verdict] = fresh.answers()
    assert verdict.value == "bot-y" and shown_slot(verdict) is None  # no order was recorded on paper
    paper.write_text(json.dumps({**row, "value": "reference"}))
    with pytest.raises(VerdictImportError, match=r"line 1, field 'value': 'reference' is not an answer"):
        import_verdicts(fresh, paper)


def test_qualification_on_pairs_compares_winners_not_screen_sides(tmp_path: Path) -> None:
    """Reference and candidate see pairs in different orders; agreement is on the winner."""
    directory = write_campaign(tmp_path / "q", references=["a001"])
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + "pairwise: true\n", encoding="utf-8")
    reference, careful, lazy = (p.id for p in invite(directory, 3))
    campaign = open_campaign(directory)
    trial = campaign.tasks(campaign.qualification_batch())
    assert len({pair_order(careful, t.candidate) == pair_order(reference, t.candidate) for t in trial}) == 2
    for person in (reference, careful):
        _finish(campaign, person)
    _finish(campaign, lazy, lambda task: "1")  # the left response, whatever it says
    assert campaign.decision(careful).kappa == pytest.approx(1.0) and campaign.decision(careful).qualified
    assert campaign.decision(lazy).kappa < campaign.decision(careful).kappa


def test_pairs_per_context_asks_people_what_the_judge_is_asked(tmp_path: Path) -> None:
    directory = _pairwise(tmp_path / "few", "pairs_per_context: 1\n")
    campaign = open_campaign(directory)
    asked = [c.item_id for b in campaign.batches for x in b.contexts for c in x.candidates]
    assert len(asked) == 4  # one pair of three for each of the four contexts
    assert len({item.split(":")[1] for item in asked}) == 3  # the three pairs of systems take turns
    items = read_items(directory / "items.jsonl")
    judged = [c.item_id for x in pair_contexts(items, per_context=1) for c in x.candidates]
    assert judged == asked  # `convoscope pairwise --pairs-per-context 1` on the same items
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("pairwise: true\n", ""), encoding="utf-8")
    with pytest.raises(CampaignError) as caught:
        load_campaign(directory)
    assert caught.value.field == "pairs_per_context"
