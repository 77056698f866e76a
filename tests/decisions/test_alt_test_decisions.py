"""Issue 36, observation 1: the alternative annotator test decides by the labels' level, not by
how the categories happen to be coded, and says "cannot tell" with two annotators. Studies
are simulated with a known answer (``simstudies``)."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from simstudies import as_words, categorical_study
from sklearn.metrics import accuracy_score

from convoscope.analysis import Decision, Rating, alt_test, metaeval
from convoscope.cli import cli
from convoscope.cli._app import _register

_register()

# Annotators right 70 % of the time; the judge right 20 %, and when wrong it says the middle code,
# the nearest *number* to every code. As categories it is far worse than any person: it must fail.
BAD_JUDGE = dict(annotator_accuracy=0.7, judge_accuracy=0.2, judge_errs_to_middle=True, n_annotators=4)
GOOD_JUDGE = dict(annotator_accuracy=0.7, judge_accuracy=0.9, n_annotators=4)


def _plain(value):
    return value.item() if hasattr(value, "item") else value


def _ratings(judge, humans):
    rows = []
    for item, label in enumerate(judge):
        rows.append(Rating(f"i{item}", "topic", "model:j", _plain(label)))
        rows.extend(Rating(f"i{item}", "topic", f"human:h{k}", _plain(row[item]))
                    for k, row in enumerate(humans))
    return rows


def _write(path, judge, humans):
    path.write_text("".join(json.dumps({"item_id": r.item_id, "criterion": r.criterion, "rater": r.rater,
                                        "value": r.value}) + "\n" for r in _ratings(judge, humans)))
    return path


@pytest.mark.parametrize("seed", range(5))
def test_a_judge_wrong_as_a_category_fails_when_its_codes_are_nominal(seed):
    judge, humans = categorical_study(np.random.default_rng(seed), **BAD_JUDGE)
    assert accuracy_score(humans[0], judge) < 0.4  # the premise: a poor categoriser
    as_codes = alt_test(judge, humans, level="nominal")
    as_strings = alt_test(as_words(judge), as_words(humans))
    assert as_codes.scoring == as_strings.scoring == "accuracy" and as_codes.level == "nominal"
    assert as_codes.decision.outcome == as_strings.decision.outcome == "fail"
    assert (as_codes.winning_rate, as_codes.advantage_probability) == \
        (as_strings.winning_rate, as_strings.advantage_probability)


@pytest.mark.parametrize("seed", range(5))
def test_a_judge_better_than_the_people_passes_however_its_categories_are_coded(seed):
    judge, humans = categorical_study(np.random.default_rng(seed), **GOOD_JUDGE)
    for found in (alt_test(judge, humans, level="nominal"), alt_test(as_words(judge), as_words(humans))):
        assert isinstance(found.decision, Decision) and found.decision.outcome == "pass"
        assert found.decision.number("winning_rate") == found.winning_rate >= 0.5


def test_nominal_codes_refuse_a_root_mean_square():
    judge, humans = categorical_study(np.random.default_rng(0), **BAD_JUDGE)
    with pytest.raises(ValueError, match="nominal labels are categories"):
        alt_test(judge, humans, level="nominal", scoring="neg_rmse")


def test_metaeval_at_the_nominal_level_scores_integer_codes_as_categories():
    judge, humans = categorical_study(np.random.default_rng(3), **BAD_JUDGE)
    coded = metaeval(_ratings(judge, humans), level="nominal", n_resamples=50)[0]
    worded = metaeval(_ratings(as_words(judge), as_words(humans)), n_resamples=50)[0]
    assert coded.alt_test.scoring == worded.alt_test.scoring == "accuracy"
    assert coded.alt_test.decision.outcome == worded.alt_test.decision.outcome == "fail"
    assert coded.kappa == pytest.approx(worded.kappa)  # unweighted: categories have no distance
    assert coded.spearman is coded.kendall is coded.pearson is None
    assert any("nominal labels are categories" in note for note in coded.notes)


@pytest.mark.parametrize("n_annotators, outcome", [(2, "cannot_tell"), (3, "pass")])
def test_two_annotators_cannot_tell_three_can(n_annotators, outcome):
    judge, humans = categorical_study(np.random.default_rng(1), annotator_accuracy=0.6,
                                      judge_accuracy=0.95, n_annotators=n_annotators)
    found = alt_test(as_words(judge), as_words(humans))
    assert found.decision.outcome == outcome and found.passed == (outcome == "pass")
    if outcome == "cannot_tell":
        assert "2 annotators" in found.decision.reason


def test_the_console_table_prints_the_level_and_no_correlation_of_codes(tmp_path):
    judge, humans = categorical_study(np.random.default_rng(3), **BAD_JUDGE)
    path = _write(tmp_path / "all.jsonl", judge, humans)
    result = CliRunner().invoke(cli, ["metaeval", str(path), "--level", "nominal", "--resamples", "50",
                                      "--permutations", "0"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "fails, accuracy (nominal)" in result.output
    assert not any(name in result.output for name in ("Spearman", "Kendall", "Pearson"))


def test_the_console_says_cannot_tell_with_two_annotators(tmp_path):
    judge, humans = categorical_study(np.random.default_rng(1), annotator_accuracy=0.6,
                                      judge_accuracy=0.95, n_annotators=2)
    path = _write(tmp_path / "all.jsonl", as_words(judge), as_words(humans))
    result = CliRunner().invoke(cli, ["metaeval", str(path), "--resamples", "50", "--permutations", "0"],
                                env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "cannot tell, accuracy" in result.output and ") passes," not in result.output


@pytest.mark.parametrize("seed", range(3))
def test_a_judge_that_ties_a_person_on_every_item_is_as_good_as_a_person(seed):
    # Ties count for both sides: a judge copying one annotator's labels is exactly as good as a
    # person, and the test must say so (pass), coded as codes or as words alike.
    _, humans = categorical_study(np.random.default_rng(seed), n_annotators=4, annotator_accuracy=0.7)
    copied = humans[0].copy()
    for found in (alt_test(copied, humans, level="nominal"), alt_test(as_words(copied), as_words(humans))):
        assert found.decision.outcome == "pass" and found.winning_rate == 1.0
