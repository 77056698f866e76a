"""Judges and people on the same pairs: people's win rates beside the judges', and each judge's
agreement with the people's majority (a pairwise campaign's export read by `convoscope pairwise`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from convoscope.judges import Verdict
from convoscope.pairwise import compare_with_people, majority

PAIRS = [f"c{i}:a~b" for i in range(8)]


def _verdict(item: str, rater: str, value: str | None) -> Verdict:
    return Verdict(item_id=item, criterion="pairwise:overall", rater=rater, system="a~b", value=value,
                   unscored_reason="idk" if value is None else None)


def test_majority_states_an_even_split_as_a_tie() -> None:
    votes = [_verdict("c0:a~b", "human:p1", "a"), _verdict("c0:a~b", "human:p2", "b"),
             _verdict("c1:a~b", "human:p1", "a"), _verdict("c1:a~b", "human:p2", "a"),
             _verdict("c1:a~b", "human:p3", "tie"), _verdict("c2:a~b", "human:p1", None)]
    assert majority(votes) == {"c0:a~b": ("a~b", "tie"), "c1:a~b": ("a~b", "a")}


def test_each_judge_is_compared_with_the_peoples_majority() -> None:
    truth = ["a", "a", "b", "tie", "a", "b", "b", "a"]
    people = [_verdict(item, f"human:p{n}", value) for item, value in zip(PAIRS, truth, strict=True)
              for n in range(3)]
    people.append(_verdict(PAIRS[0], "human:p9", None))  # "I don't know" is not a vote
    judge = ["a", "b", "b", "tie", "a", "a", "b", "a"]
    verdicts = [_verdict(item, "model:scripted", value) for item, value in zip(PAIRS, judge, strict=True)]
    section, agreement = compare_with_people(verdicts, people, "pairwise:overall", n_resamples=100)
    assert section is not None and (section.answers, section.pairs) == (24, 8)
    rates = {row.system: row.rate for row in section.win_rates}
    assert rates["a"] == pytest.approx((4 + 0.5) / 8)  # four wins and one tie in eight pairs
    row = agreement["model:scripted"]
    assert row.pairs == 8 and row.agreement == pytest.approx(6 / 8)
    assert row.kappa == pytest.approx(cohen_kappa_score(judge, truth))
    assert compare_with_people(verdicts, people, "pairwise:other") == (None, {})


@pytest.mark.slow
def test_the_command_puts_a_campaigns_people_beside_the_embedded_judge(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from convoscope.campaigns import Submission, export_verdicts, invite, open_campaign, pair_order
    from convoscope.cli import cli
    from convoscope.cli._app import _register

    _register()
    rows = [{"id": f"{system}-{n}", "system": system, "response": text.format(n=n),
             "context": [{"speaker": "user", "text": f"Can you recommend a book about topic {n}?"}],
             "meta": {"context_id": f"t{n}"}}
            for n in range(3) for system, text in (("great-bot", "Try 'Books on topic {n}', a clear intro."),
                                                   ("weak-bot", "no"))]
    study = tmp_path / "study"
    study.mkdir()
    (study / "items.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    (study / "campaign.yaml").write_text(
        "name: books\npairwise: true\ncriteria: [response-candidates:appropriateness]\n"
        "contexts_per_batch: 3\nannotators_per_batch: 2\nqualification:\n  enabled: false\n"
        "items: items.jsonl\n", encoding="utf-8")
    campaign = open_campaign(study)
    for person in (p.id for p in invite(study, 2)):
        while (work := campaign.work(person)).task is not None:
            first, _ = pair_order(person, work.task.candidate)
            campaign.submit(person, work.task, Submission(answer="1" if first.system == "great-bot" else "2"))
    people = tmp_path / "people.jsonl"
    assert export_verdicts(campaign, people) == 6
    args = ["pairwise", str(study / "items.jsonl"), "--criterion", "response-candidates:appropriateness",
            "--store", str(tmp_path / "pairs.db"), "--resamples", "50", "--human", str(people)]
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "200"})
    assert result.exit_code in (0, 4), result.output
    assert "judged by people: 6 answers on 3 pairs" in result.output
    assert "Judges against people" in result.output
    line = next(text for text in result.output.splitlines() if text.strip().startswith("model:"))
    # The rater's name in full ("[completion]" is not taken for markup); it scored the three pairs.
    assert line.split()[:2] == ["model:embedded:smollm2[completion]", "3"]


def test_win_rates_without_resampling_have_no_interval() -> None:
    """Observed: win_rates(..., n_resamples=0) crashed in the percentile step."""
    from convoscope.pairwise import Outcome, win_rates

    rows = win_rates([Outcome("a", "b", 1.0), Outcome("a", "b", 0.5)], n_resamples=0)
    assert [(r.system, r.rate, r.ci) for r in rows] == [("a", 0.75, None), ("b", 0.25, None)]


def test_pairs_per_context_rotates_so_every_pair_and_system_is_asked() -> None:
    """Six systems give fifteen pairs per context; three per context still cover every pair,
    each equally often over five contexts, and the same items give the same pairs."""
    from collections import Counter

    from convoscope import Item, Turn
    from convoscope.pairwise import make_pairs

    systems = [f"s{n}" for n in range(6)]
    items = [Item(id=f"c{c}-{s}", system=s, context=(Turn(speaker="user", text=f"question {c}"),),
                  response=f"{s} on {c}") for c in range(5) for s in systems]
    chosen = make_pairs(items, per_context=3)
    per_context = Counter(pair.id.split(":")[0] for pair in chosen)
    assert len(chosen) == 15 and set(per_context.values()) == {3}
    assert Counter(pair.system for pair in chosen) == Counter({p.system: 1 for p in make_pairs(items[:6])})
    first_context = [pair.system for pair in chosen[:3]]
    assert len({s for pair in first_context for s in pair.split("~")}) == 6  # three pairs, six systems
    assert [p.id for p in make_pairs(items, per_context=3)] == [p.id for p in chosen]
    assert {p.id for p in chosen} <= {p.id for p in make_pairs(items)}  # the same ids as every pair
