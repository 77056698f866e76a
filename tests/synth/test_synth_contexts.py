"""Seed contexts: reproducible, balanced over affect quadrants, gender only where grammar needs it."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from convoscope.items import ItemError
from convoscope.synth import (
    Scene,
    affect_in_scene,
    affect_quadrants,
    builtin_personas,
    builtin_scenes,
    read_contexts,
    read_scenes,
    sample_contexts,
)


def test_sampling_is_reproducible_and_depends_on_the_seed():
    assert sample_contexts(5, ["en", "pt"], seed=1) == sample_contexts(5, ["en", "pt"], seed=1)
    assert sample_contexts(5, ["en", "pt"], seed=1) != sample_contexts(5, ["en", "pt"], seed=2)


def test_each_draw_is_crossed_with_every_language():
    contexts = sample_contexts(4, ["en", "pt", "ko"], seed=0)
    assert len(contexts) == 12
    by_draw = {}
    for context in contexts:
        by_draw.setdefault(context.id.split("-")[1], set()).add((context.scene_id, context.persona_id))
    assert all(len(pairs) == 1 for pairs in by_draw.values())
    assert len({c.scene_id for c in contexts}) == 4  # no scene repeats while the pool lasts


def test_gender_is_sampled_only_for_gendered_languages():
    contexts = sample_contexts(30, ["en", "pt", "ko"], seed=0)
    assert {c.gender for c in contexts if c.language in ("en", "ko")} == {None}
    assert {c.gender for c in contexts if c.language == "pt"} == {"female", "male"}


def test_built_in_quadrants_are_even_and_sampled_evenly():
    quadrants = affect_quadrants()
    assert len(quadrants) == 4 and len({len(states) for states in quadrants.values()}) == 1
    neutral = [Scene(id=f"s{i}", text=f"They are choosing paint for room {i}.") for i in range(50)]
    contexts = sample_contexts(800, ["en"], seed=4, scenes=neutral)
    counts = Counter(c.affect_quadrant for c in contexts)
    assert set(counts) == set(quadrants)
    assert all(160 <= count <= 240 for count in counts.values()), counts  # 200 expected each
    assert all(c.affect in quadrants[c.affect_quadrant] for c in contexts)


def test_a_scene_that_carries_an_affect_keeps_it():
    own = Scene(id="a", text="They feel nervous about a job interview on Monday.")
    given = Scene(id="b", text="Their cat knocked over a vase.", affect="amused")
    assert affect_in_scene(own) == "nervous" and affect_in_scene(given) == "amused"
    contexts = sample_contexts(2, ["en"], seed=0, scenes=[own, given])
    assert {(c.affect, c.affect_source, c.affect_quadrant) for c in contexts} == {
        ("nervous", "scene", None), ("amused", "scene", None)}


def test_built_in_sets_are_there_and_use_no_placeholders():
    scenes, personas = builtin_scenes(), builtin_personas()
    assert len(scenes) >= 30 and len(personas) >= 20
    assert not any("Person" in s.text for s in scenes)


def test_user_files_load_and_bad_lines_name_file_line_and_field(tmp_path):
    good = tmp_path / "scenes.jsonl"
    good.write_text('{"text": "They lost their keys."}\n\n{"id": "x", "text": "They won a raffle.", '
                    '"affect": "surprised"}\n')
    scenes = read_scenes(good)
    assert [s.id for s in scenes] == ["scene-line1", "x"] and scenes[1].affect == "surprised"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"id": "y", "txt": "typo"}\n')
    with pytest.raises(ItemError, match=r"bad.jsonl, line 2, field 'text'"):
        read_scenes(bad)


def test_contexts_round_trip_and_errors(tmp_path):
    path = tmp_path / "contexts.jsonl"
    contexts = sample_contexts(2, ["ko"], seed=0)
    path.write_text("".join(c.model_dump_json() + "\n" for c in contexts))
    assert read_contexts(path) == contexts
    row = json.loads(contexts[0].model_dump_json())
    del row["language"]
    path.write_text(contexts[1].model_dump_json() + "\n" + json.dumps(row) + "\n")
    with pytest.raises(ItemError, match=r"line 2, field 'language'"):
        read_contexts(path)
    with pytest.raises(ValueError, match="unknown language xx"):
        sample_contexts(1, ["xx"])
