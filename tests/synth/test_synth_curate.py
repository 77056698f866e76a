"""Curation on a synthetic pool whose best balanced selection is known."""

from __future__ import annotations

import pytest

from convoscope.errors import ConvoscopeError
from convoscope.items import Item, Turn
from convoscope.judges import Verdict
from convoscope.synth import DEFAULT_ISSUES, candidates, curate, pick_rater

RATER = "model:openai:judge@http://127.0.0.1:9/v1"
CHAT = (Turn(speaker="user", text="Any ideas for a cheap weekend trip?"),
        Turn(speaker="chatbot", text="A train to the coast is cheap and relaxing this time of year."))

# id: (chatbot, overall, issues)
POOL = {
    "a-clean-5": ("A", 5, ()), "a-clean-4": ("A", 4, ()),
    "b-clean-5a": ("B", 5, ()), "b-clean-5b": ("B", 5, ()), "b-clean-3": ("B", 3, ()),
    "a-rep-3": ("A", 3, ("repetitive",)), "b-rep-4": ("B", 4, ("repetitive",)),
    "b-rep-5": ("B", 5, ("repetitive",)),
    "a-irr-4": ("A", 4, ("irrelevant",)), "a-irr-5": ("A", 5, ("irrelevant",)),
    "b-irr-3": ("B", 3, ("irrelevant",)),
    "a-mix-2": ("A", 2, ("uninterpretable",)),   # the judge says: the bot switched language
}
# The only selection of six with two dialogues per score (3, 4, 5), three per chatbot, two
# issue-free (the best of each pair) and two per issue present.
BEST = {"a-clean-5", "a-rep-3", "b-rep-4", "a-irr-4", "b-irr-3"}


def pool_items_and_verdicts(pool=POOL, language="en", rater=RATER):
    items, verdicts = [], []
    for item_id, (bot, overall, issues) in pool.items():
        items.append(Item(id=item_id, context=CHAT, language=language, system=bot,
                          meta={"synth": {"user": "u", "filter": {"passed": True, "reasons": []}}}))
        verdicts.append(Verdict(item_id=item_id, criterion="overall", rater=rater, value=overall))
        for issue in DEFAULT_ISSUES:
            reason = "Switches to Chinese halfway through." if item_id == "a-mix-2" else "fine"
            verdicts.append(Verdict(item_id=item_id, criterion=issue, rater=rater,
                                    value=int(issue in issues), reason=reason))
    return items, verdicts


@pytest.mark.parametrize("seed", range(6))
def test_the_known_best_balanced_selection_is_found(seed):
    items, verdicts = pool_items_and_verdicts()
    chosen, [summary] = curate(items, verdicts, per_language=6, seed=seed)
    ids = {item.id for item in chosen}
    assert ids - {"b-clean-5a", "b-clean-5b"} == BEST
    assert len(ids & {"b-clean-5a", "b-clean-5b"}) == 1
    assert summary.by_chatbot == {"A": 3, "B": 3}
    assert summary.by_overall == {"3": 2, "4": 2, "5": 2}
    assert summary.by_issue["repetitive"] == summary.by_issue["irrelevant"] == 2
    assert summary.issue_free == 2 and summary.excluded == {"language_mix_only": 1}
    stages = [item.meta["curation"]["stage"] for item in chosen]
    assert stages[:2] == ["clean-random", "clean-random"]
    assert sorted(stages[2:]) == ["issue:irrelevant", "issue:irrelevant", "issue:repetitive",
                                  "issue:repetitive"]


def test_same_seed_same_benchmark_and_pool_exhaustion():
    items, verdicts = pool_items_and_verdicts()
    assert curate(items, verdicts, per_language=6, seed=1)[0] == curate(items, verdicts, per_language=6,
                                                                          seed=1)[0]
    chosen, [summary] = curate(items, verdicts, per_language=100)
    assert summary.selected == len(chosen) == 11 == summary.pool  # everything but the mixed one
    assert chosen[-1].meta["curation"]["stage"] == "issue-free"


def test_filtered_and_unscored_dialogues_are_left_out_per_language():
    items, verdicts = pool_items_and_verdicts()
    pt_items, pt_verdicts = pool_items_and_verdicts(language="pt")
    pt_items = [item.model_copy(update={"id": "pt-" + item.id}) for item in pt_items]
    pt_verdicts = [v.model_copy(update={"item_id": "pt-" + v.item_id}) for v in pt_verdicts]
    pt_items[0] = pt_items[0].model_copy(update={"meta": {"synth": {"user": "u", "filter": {
        "passed": False, "reasons": ["user_language"]}}}})
    pt_verdicts = [v for v in pt_verdicts if not (v.item_id == "pt-a-clean-4" and v.criterion == "overall")]
    chosen, summaries = curate(items + pt_items, verdicts + pt_verdicts, per_language=4)
    assert [s.language for s in summaries] == ["en", "pt"]
    assert summaries[1].excluded == {"filtered": 1, "no_overall": 1, "language_mix_only": 1}
    assert sum(item.language == "pt" for item in chosen) == 4


def test_language_mixing_is_also_caught_from_the_chatbot_text():
    pytest.importorskip("py3langid")
    items, verdicts = pool_items_and_verdicts({"mixed": ("A", 3, ("uninterpretable",)),
                                               "fine": ("A", 5, ())})
    verdicts = [v.model_copy(update={"reason": "hard to follow"}) for v in verdicts]
    chinese = (CHAT[0], Turn(speaker="chatbot", text="周末去海边旅行是个好主意，火车票也很便宜。"))
    items[0] = items[0].model_copy(update={"context": chinese})
    _, [summary] = curate(items, verdicts, per_language=5)
    assert summary.excluded == {"language_mix_only": 1}


def test_pooled_panel_values_are_read_as_issues_and_rounded_scores():
    items, verdicts = pool_items_and_verdicts({"x": ("A", 4, ("repetitive",))})
    pooled = [v.model_copy(update={"value": 4.4 if v.criterion == "overall" else
                                   (0.67 if v.value else 0.33)}) for v in verdicts]
    [candidate] = candidates(items, pooled)
    assert candidate.overall == 4 and candidate.issues == ("repetitive",)


def test_the_rater_must_be_unambiguous():
    _, verdicts = pool_items_and_verdicts()
    other = [v.model_copy(update={"rater": "model:embedded:smollm2"}) for v in verdicts]
    with pytest.raises(ValueError, match="choose one with --rater"):
        pick_rater(verdicts + other)
    assert pick_rater(verdicts + other, "model:embedded:smollm2") == "model:embedded:smollm2"
    panel = [v.model_copy(update={"rater": "panel:majority:a,b"}) for v in verdicts]
    assert pick_rater(verdicts + other + panel) == "panel:majority:a,b"
    with pytest.raises(ValueError, match="not in the verdicts"):
        pick_rater(verdicts, "model:nobody")


def test_verdicts_about_other_dialogues_are_refused():
    items, verdicts = pool_items_and_verdicts()
    elsewhere = [v.model_copy(update={"item_id": "other-" + v.item_id}) for v in verdicts]
    with pytest.raises(ValueError, match="item ids differ"):
        curate(items, elsewhere)


def test_human_issue_labels_written_as_words_map_through_the_criterion():
    """Observed: human labels kept as words ("true", "Present ") did not match the stored 1 / 0."""
    items, verdicts = pool_items_and_verdicts()
    words = {1: ["present", "Present ", "true", "yes"], 0: ["absent", "false", "no", "Absent"]}
    as_words = [v.model_copy(update={"value": words[v.value][i % 4], "rater": "human:ann"})
                if v.criterion != "overall" else v.model_copy(update={"rater": "human:ann"})
                for i, v in enumerate(verdicts)]
    by_numbers = {c.id: c.issues for c in candidates(items, verdicts)}
    by_words = {c.id: c.issues for c in candidates(items, as_words)}
    assert by_words == by_numbers and any(by_words.values())
    off_scale = [as_words[1].model_copy(update={"value": "maybe"}), *as_words[2:]]
    with pytest.raises(ConvoscopeError, match="'maybe' is not on the scale"):
        candidates(items, off_scale)


# Seed 001, appendix E.1: "randomly sampling one dialogue per user-chatbot [pair] that contains
# no issues and has a overall score of 5".
BAR_POOL = {
    "a-clean-5": ("A", 5, ()), "a-clean-4": ("A", 4, ()),
    "b-clean-5a": ("B", 5, ()), "b-clean-5b": ("B", 5, ()), "b-clean-5c": ("B", 5, ()),
    "c-clean-4": ("C", 4, ()), "c-clean-3": ("C", 3, ()),
    "c-rep-5": ("C", 5, ("repetitive",)),
}


def clean_picks(chosen):
    return {item.id for item in chosen if item.meta["curation"]["stage"].startswith("clean")}


def test_clean_dialogues_are_drawn_at_random_among_those_scoring_the_top_of_the_scale():
    """Observed (issue 26, obs. 7): curation took the best issue-free dialogue per pair, where the
    seed draws at random among the issue-free dialogues that score 5."""
    items, verdicts = pool_items_and_verdicts(BAR_POOL)
    drawn = []
    for seed in range(12):
        chosen, [summary] = curate(items, verdicts, per_language=3, seed=seed)
        picks = clean_picks(chosen)
        assert "a-clean-5" in picks and not picks & {"a-clean-4", "c-clean-4", "c-clean-3"}
        assert summary.pairs_without_clean_dialogue == ("u x C",)  # no issue-free 5 for C
        assert {item.meta["curation"]["stage"] for item in chosen if item.id in picks} == {"clean-random"}
        drawn.append(picks - {"a-clean-5"})
    assert set().union(*drawn) == {"b-clean-5a", "b-clean-5b", "b-clean-5c"}  # each one of them
    assert all(len(picks) == 1 for picks in drawn)


def test_a_lower_bar_draws_among_every_clean_dialogue_that_reaches_it():
    items, verdicts = pool_items_and_verdicts(BAR_POOL)
    drawn = set()
    for seed in range(16):
        chosen, [summary] = curate(items, verdicts, per_language=3, seed=seed, clean_min_overall=4)
        drawn |= clean_picks(chosen)
        assert summary.pairs_without_clean_dialogue == ()
    assert {"a-clean-4", "a-clean-5", "c-clean-4"} <= drawn and "c-clean-3" not in drawn


def test_the_best_clean_dialogue_per_pair_stays_available_as_an_option():
    items, verdicts = pool_items_and_verdicts(BAR_POOL)
    for seed in range(6):
        chosen, [summary] = curate(items, verdicts, per_language=3, seed=seed, clean_pick="best")
        picks = clean_picks(chosen)
        assert {"a-clean-5", "c-clean-4"} <= picks and len(picks) == 3
        assert {item.meta["curation"]["stage"] for item in chosen} == {"clean-top"}
    with pytest.raises(ConvoscopeError, match="clean_pick"):
        curate(items, verdicts, clean_pick="first")  # type: ignore[arg-type]
    with pytest.raises(ConvoscopeError, match="between 1 and 5"):
        curate(items, verdicts, clean_min_overall=6)
