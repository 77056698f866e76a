"""Ji et al. 2022: one worker per conversation, pseudonymous worker ids, pass / fail screening."""

import json

import pytest

from convoscope.datasets import load_benchmark
from convoscope.datasets._ji2022 import pseudonym
from convoscope.items import ItemError


def test_default_set_is_workers_who_passed(samples):
    ji = load_benchmark("ji2022", samples / "ji2022-dialogue-eval")
    assert ji.granularity == "dialogue" and len(ji.items) == 4
    assert {item.meta["qc"] for item in ji.items} == {"pass"}
    assert len(ji.human) == 4 * 7
    first = ji.items[0]
    assert first.id == "ji2022:pass_free(run1):0:0" and first.system == "A_p"
    assert [turn.speaker for turn in first.context] == ["user", "bot", "user", "bot"]
    assert first.response is None and first.meta["run"] == "free(run1)"


def test_all_includes_failed_workers_and_one_pseudonym_per_worker(samples):
    ji = load_benchmark("ji2022-all", samples)
    assert len(ji.items) == 6
    assert ji.raters == tuple(sorted(["human:" + pseudonym("W-ONE"), "human:" + pseudonym("W-TWO")]))
    worker_one = {v.item_id.split(":")[1] for v in ji.human if v.rater == "human:" + pseudonym("W-ONE")}
    assert worker_one == {"pass_free(run1)", "fail_icebreaker"}  # the same person across files


def test_worker_ids_are_not_published(samples, tmp_path):
    ji = load_benchmark("ji2022-all", samples)
    dumped = json.dumps([v.model_dump(mode="json") for v in ji.human]) + json.dumps(
        [item.model_dump(mode="json") for item in ji.items])
    assert "W-ONE" not in dumped and "W-TWO" not in dumped


def test_raw_scores_are_kept_as_given(samples):
    ji = load_benchmark("ji2022", samples)
    scores = {v.criterion: v.value for v in ji.human if v.item_id == "ji2022:pass_free(run1):0:1"}
    assert scores == {"robotic": 100, "interesting": 0, "fun": 0, "consistent": 2, "fluent": 0,
                      "repetitive": 100, "topic": 0}
    assert ji.items[1].system == "QualityControl"


def test_a_text_score_names_line_and_field(broken_copy):
    def mutate(data):
        data[1]["data"][0]["raw scores"]["fun"] = "high"

    file, line = broken_copy("ji2022-dialogue-eval/pass_free(run1).json", mutate, '"high"')
    with pytest.raises(ItemError) as caught:
        load_benchmark("ji2022", file)
    assert (caught.value.line, caught.value.field) == (line, "[1].data[0].raw scores.fun")


def test_loader_keeps_the_per_worker_z_scores(samples):
    # Issue 15: the z-scores Ji et al. compute per worker were dropped, so their system-level
    # self-replication (r = .969) could not be recomputed.
    ji = load_benchmark("ji2022", samples)
    z = ji.derived["z"]
    assert len(z) == len(ji.human)
    raw = json.loads((samples / "ji2022-dialogue-eval" / "pass_free(run1).json").read_text())
    expected = raw[0]["data"][1]["z scores"]
    found = {r.criterion: r.value for r in z if r.item_id == "ji2022:pass_free(run1):0:1"}
    assert found == pytest.approx(expected)
    assert {r.rater for r in z} == {v.rater for v in ji.human}
    assert all(r.system for r in z)


def test_a_text_z_score_names_line_and_field(broken_copy):
    def mutate(data):
        data[0]["data"][0]["z scores"]["fun"] = "high"

    file, line = broken_copy("ji2022-dialogue-eval/pass_free(run1).json", mutate, '"high"')
    with pytest.raises(ItemError) as caught:
        load_benchmark("ji2022", file)
    assert (caught.value.line, caught.value.field) == (line, "[0].data[0].z scores.fun")


def test_all_loads_failed_workers_with_null_z_scores_and_counts_them(samples, tmp_path):
    # Issue 27, observation 6: the public release's failed-QC files hold workers who gave every
    # conversation 50, so their z-score is undefined and stored as null; one null refused the set.
    def mutate(data):
        for conversation in data[0]["data"]:
            conversation["raw scores"] = dict.fromkeys(conversation["raw scores"], 50)
            conversation["z scores"] = dict.fromkeys(conversation["z scores"])

    source = json.loads((samples / "ji2022-dialogue-eval" / "fail_icebreaker.json").read_text())
    mutate(source)
    folder = tmp_path / "ji"
    folder.mkdir()
    (folder / "fail_icebreaker.json").write_text(json.dumps(source), encoding="utf-8")
    (folder / "pass_free(run1).json").write_text(
        (samples / "ji2022-dialogue-eval" / "pass_free(run1).json").read_text(), encoding="utf-8")
    ji = load_benchmark("ji2022-all", folder)
    nulls = len(source[0]["data"])
    assert len(ji.items) == 6 and len(ji.human) == 6 * 7  # raw ratings kept
    assert len(ji.derived["z"]) == (6 - nulls) * 7
    counted = [note for note in ji.notes if note.startswith("conversations without z-scores")]
    assert len(counted) == 1 and f"): {nulls} (e.g." in counted[0], ji.notes
