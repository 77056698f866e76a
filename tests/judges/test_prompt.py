"""What the judge reads: the situation (knowledge, persona, documents) before the conversation."""

from convoscope.criteria import get_criterion
from convoscope.items import Item, Turn
from convoscope.judges import render_item

CRITERION = get_criterion("response-candidates:correctness")


def test_knowledge_and_persona_from_meta_come_before_the_conversation():
    item = Item(id="1", context=(Turn(speaker="A", text="Do you like jazz?"),), response="I play the sax!",
                meta={"knowledge": "Charlie Parker played alto saxophone.",
                      "persona": ["I play the saxophone.", "  ", "I live in Ohio."], "context_index": 3})
    text = render_item(item, CRITERION)
    assert text.index("Charlie Parker") < text.index("Do you like jazz?") < text.index("I play the sax!")
    assert '["I play the saxophone.", "I live in Ohio."]' in text
    assert "context_index" not in text  # only the situation fields are shown


def test_items_without_situation_fields_read_as_before():
    item = Item(id="1", context=(Turn(speaker="A", text="Hi"),), response="Hello", meta={"knowledge": " "})
    body = render_item(item, CRITERION).splitlines()[1:-1]
    assert body == ["{", ' "Conversation so far": ["A: Hi"],', ' "Response to judge": "Hello"', "}"]
