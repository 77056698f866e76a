"""What planning a task costs in the planning threads (issue 39: CPU per verdict).

Counted here, never timed: how often a whole request is serialised, how many JSON encoders are
built, whether SQLAlchemy processes each registered key. The keys and bytes themselves must not
change (a store written before resumes): each count comes with the bytes it must still equal.
"""

from __future__ import annotations

import json

import pytest

from convoscope.criteria import Criterion, Scale, get_criterion
from convoscope.items import Item, Turn
from convoscope.judges import RubricJudge, build_request
from convoscope.models import GenerateRequest, OpenAIModel

# Text that JSON writes in every way it can: quotes, backslashes, control characters, the line
# breaks quote() escapes itself, non-ASCII letters, an emoji, a NUL.
AWKWARD = ['plain', 'a "quoted" \\ back\\slash', "tab\there\nnew line\r", "line\u2028sep\u2029para\u0085",
           "Grüße, 東京 🚋", "nul \x00 bell \x07", ""]


def _items() -> list[Item]:
    return [Item(id=f"i{n}", question=f"What {text}?", response=f"{text} {n}",
                 context=[Turn(speaker="user", text=text)], reference=text or None,
                 meta={"knowledge": [text, "more"]} if n % 2 else {})
            for n, text in enumerate(AWKWARD)]


class _Counting:
    """Stands in for GenerateRequest's pydantic serializer and counts whole-request serialisations."""

    def __init__(self, real):
        self.real, self.calls = real, 0

    def to_json(self, *args, **kwargs):
        self.calls += 1
        return self.real.to_json(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.real, name)


@pytest.mark.parametrize("persona", [None, "a commuter"])
def test_a_chat_request_is_serialised_from_a_template_per_criterion_byte_for_byte(monkeypatch, persona):
    # Before: each request's ~4.5 kB (system prompt, schema) serialised whole, once per item.
    real = GenerateRequest.__pydantic_serializer__
    criteria = [get_criterion("survey:effort"),
                Criterion(name="quality", question="Good?", definition="Overall quality.",
                          scale=Scale(kind="range", minimum=1, maximum=5))]
    requests = [build_request(criterion, item, persona=persona, max_tokens=300)
                for criterion in criteria for item in _items()]
    counting = _Counting(real)
    monkeypatch.setattr(GenerateRequest, "__pydantic_serializer__", counting)
    built = [build_request(criterion, item, persona=persona, max_tokens=300)
             for criterion in criteria for item in _items()]
    wires = [request.wire for request in built]
    assert counting.calls == 0
    for request, wire in zip(requests, wires, strict=True):
        assert wire == real.to_json(request)  # what every key hashed before


def test_a_changed_copy_of_a_request_is_serialised_anew():
    request = build_request(get_criterion("survey:effort"), _items()[1])
    copy = request.model_copy(update={"temperature": 0.5, "seed": 7})
    assert copy.wire == GenerateRequest.__pydantic_serializer__.to_json(copy) != request.wire


def test_rendering_and_keying_build_no_json_encoder_per_call(monkeypatch):
    # Before: json.dumps(value, ensure_ascii=False) built an encoder per quoted field, and the
    # task key two more per task (its criterion and item id).
    judge = RubricJudge(OpenAIModel("m", base_url="http://127.0.0.1:9/v1"))
    criterion = get_criterion("survey:effort")
    items = _items()
    expected = [judge.task_key(item, criterion) for item in items]
    built = []

    class Counting(json.JSONEncoder):
        def __init__(self, *args, **kwargs):
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(json, "JSONEncoder", Counting)
    keys = [judge.task_key(item, criterion, judge.request(item, criterion)) for item in items]
    assert built == []
    assert keys == expected


def test_a_chunk_registers_its_keys_in_a_few_multi_row_statements_without_sqlalchemy_per_row_work(
        tmp_path, monkeypatch):
    # Before: Connection.execute with a dict per key, each built into parameters by SQLAlchemy.
    import sqlalchemy as sa
    from sqlalchemy.sql import compiler

    from convoscope.store import Store
    from convoscope.store._chunks import register_tasks

    store = Store(tmp_path / "s.db")
    seen = []
    sa.event.listen(store.engine, "before_cursor_execute",
                    lambda _conn, _cursor, sql, _params, _context, many: seen.append((sql, many)))
    built = []
    real = compiler.SQLCompiler.construct_params
    monkeypatch.setattr(compiler.SQLCompiler, "construct_params",
                        lambda self, *args, **kwargs: built.append(1) or real(self, *args, **kwargs))
    keys = [(f"k{n}", n, n % 3 == 0) for n in range(1200)]
    with store.engine.begin() as connection:
        register_tasks(connection, "r", 4, keys)
        register_tasks(connection, "r", 4, keys[:10])  # already there: nothing changes
    assert built == []
    # 1,200 keys of 5 values: 7 statements of at most 199 rows (SQLite's 999 parameters), then 1.
    assert [many for sql, many in seen if sql.startswith("INSERT INTO run_tasks")] == [False] * 8
    with store.engine.connect() as connection:
        rows = connection.exec_driver_sql("select task_key, chunk, position, member from run_tasks "
                                          "where run_id = 'r' order by position").all()
    assert [tuple(row) for row in rows] == [(key, 4, position, int(member)) for key, position, member in keys]


def test_the_system_message_is_built_once_per_criterion_not_per_item(monkeypatch):
    # Before: a Message (validated by pydantic) for the same ~3.5 kB system prompt per item.
    from convoscope.models import Message

    criterion = get_criterion("survey:effort")
    expected = [build_request(criterion, item).messages for item in _items()]
    built = []
    real = Message.__init__
    monkeypatch.setattr(Message, "__init__", lambda self, **fields: built.append(fields["role"]) or
                        real(self, **fields))
    messages = [build_request(criterion, item).messages for item in _items()]
    assert built == ["user"] * len(_items())
    assert messages == expected
