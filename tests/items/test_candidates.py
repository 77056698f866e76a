"""Grouping candidates by context and adding the ground-truth turn as one more candidate."""

import pytest

from convoscope.items import Item, Turn, context_key, with_reference_candidates

CONTEXT = (Turn(speaker="user", text="Any tips for a first marathon?"),)


def candidate(item_id, system, reference="Start slow and eat early.", context=CONTEXT, **meta):
    return Item(id=item_id, context=context, response=f"{system} says run", reference=reference,
                system=system, language="en", meta=meta)


def test_each_context_gets_its_reference_once_after_its_candidates():
    other = (Turn(speaker="user", text="What should I cook tonight?"),)
    items = [candidate("a", "bot-a"), candidate("b", "bot-b"),
             candidate("c", "bot-a", reference="Try a risotto.", context=other)]
    result = with_reference_candidates(items)
    assert [item.id for item in result] == ["a", "b", f"{context_key(items[0])}:reference",
                                            "c", f"{context_key(items[2])}:reference"]
    reference = result[2]
    assert (reference.response, reference.reference, reference.system) == (
        "Start slow and eat early.", None, "reference")
    assert reference.context == CONTEXT and reference.language == "en"
    assert reference.meta["reference_candidate"] is True


def test_context_id_in_meta_groups_items_whose_turns_differ():
    items = [candidate("a", "bot-a", context_id="x"),
             candidate("b", "bot-b", context=(Turn(speaker="u", text="other"),), context_id="x")]
    assert [item.id for item in with_reference_candidates(items)] == ["a", "b", "x:reference"]


def test_contexts_without_a_reference_and_whole_dialogues_get_none():
    items = [candidate("a", "bot-a", reference=None),
             Item(id="d", context=CONTEXT, reference="gold", system="bot-a")]  # no response
    assert [item.id for item in with_reference_candidates(items)] == ["a", "d"]


def test_an_id_clash_is_an_error_not_a_silent_overwrite():
    items = [candidate("x:reference", "bot-a", context_id="x"), candidate("b", "bot-b", context_id="x")]
    with pytest.raises(ValueError, match="x:reference"):
        with_reference_candidates(items)


def test_judge_command_adds_the_reference_candidates(tmp_path):
    # The answer-length KPI is computed, not judged: the command runs without a model.
    import json

    from click.testing import CliRunner

    from convoscope.cli import cli
    from convoscope.cli._app import _register

    _register()
    source = tmp_path / "candidates.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in [
        {"id": "a", "context": [{"speaker": "user", "text": "Tips?"}], "response": "Run slow.",
         "reference": "Start slow and eat early.", "system": "bot-a", "meta": {"context_id": "m1"}},
        {"id": "b", "context": [{"speaker": "user", "text": "Tips?"}], "response": "No idea.",
         "reference": "Start slow and eat early.", "system": "bot-b", "meta": {"context_id": "m1"}}]))
    out = tmp_path / "verdicts.jsonl"
    result = CliRunner().invoke(cli, ["judge", str(source), "--kpi", "answer-length",
                                      "--reference-candidates", "--store", str(tmp_path / "s.db"),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(row["item_id"], row["system"]) for row in rows} == {
        ("a", "bot-a"), ("b", "bot-b"), ("m1:reference", "reference")}
