"""What each verdict costs the client beside its HTTP call (issue 39: CPU per verdict).

Counted here, never timed: how often the writer thread is woken, how often the verdicts' INSERT
is built. The CPU figures themselves are in benchmarks/results/cli_overhead.md.
"""

from __future__ import annotations

import asyncio

from convoscope.judges import Verdict
from convoscope.store import Store, VerdictWriter, _store


def _verdict(number: int, reason: str | None = None) -> Verdict:
    value = None if reason else 1
    return Verdict(item_id=str(number), criterion="c", rater="model:x", value=value, unscored_reason=reason)


async def test_a_burst_of_500_verdicts_wakes_the_writer_twice(tmp_path):
    # Before: a hand-over every 64 tasks or 5 ms (8 for this burst), each waking the writer
    # thread, which then takes the GIL from the event loop.
    store = Store(tmp_path / "s.db")
    writer = VerdictWriter(store, "r")
    for number in range(500):
        writer.put([(f"k{number}", _verdict(number))])
    writer.close()
    assert writer.handovers <= 2
    assert len(store.verdicts_by_key([f"k{n}" for n in range(500)])) == 500


def test_the_verdicts_insert_is_built_once_per_store(tmp_path, monkeypatch):
    # Before: built for every commit, its ON CONFLICT clause and excluded columns included.
    built = []
    real = _store.insert_for
    monkeypatch.setattr(_store, "insert_for", lambda *args: built.append(1) or real(*args))
    store = Store(tmp_path / "s.db")
    for number in range(5):
        store.add_many("", [(f"k{number}", _verdict(number, "model_error"))], supersede=["model_error"])
    store.add_many("", [("k0", _verdict(0))], supersede=["model_error"])  # replaces the failure
    store.add_many("", [("k1", _verdict(1))])  # no supersede: kept as it was
    assert len(built) == 2  # one per kind of statement, not one per write
    found = store.verdicts_by_key(["k0", "k1"])
    assert found["k0"].value == 1 and found["k1"].unscored_reason == "model_error"


def test_the_writer_still_commits_a_lone_verdict_at_close(tmp_path):
    store = Store(tmp_path / "s.db")

    async def one() -> VerdictWriter:
        writer = VerdictWriter(store, "r")
        writer.put([("k", _verdict(1))])
        await asyncio.sleep(0)
        return writer

    writer = asyncio.run(one())
    writer.close()
    assert list(store.verdicts_by_key(["k"])) == ["k"]


async def test_the_in_flight_limit_queues_in_turn_and_survives_cancelled_waiters():
    from convoscope.models._limits import AdaptiveLimit

    limit = AdaptiveLimit(2)  # no slow start: two at once
    order: list[int] = []
    release = asyncio.Event()

    async def call(number: int) -> None:
        async with limit.slot():
            order.append(number)
            await release.wait()

    tasks = [asyncio.ensure_future(call(number)) for number in range(5)]
    await asyncio.sleep(0)
    assert order == [0, 1] and limit.in_flight == 2
    tasks[2].cancel()  # a waiter gives up: its place is not lost, nor counted
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert order == [0, 1, 3, 4] and limit.in_flight == 0 and limit.peak == 2


async def test_a_free_slot_is_taken_without_an_async_generator():
    # Before: an @asynccontextmanager (an async generator the loop registers, then a lock taken
    # twice) for every call.
    from convoscope.models._limits import AdaptiveLimit

    loop = asyncio.get_running_loop()
    limit = AdaptiveLimit(8)
    before = len(loop._asyncgens)  # type: ignore[attr-defined]
    slot = limit.slot()
    async with slot:
        assert len(loop._asyncgens) == before  # type: ignore[attr-defined]
        assert limit.in_flight == 1
    assert limit.in_flight == 0


def test_a_chat_body_is_the_json_of_its_fields_and_its_shell_is_encoded_once(monkeypatch):
    # The body is cut from the request's one serialisation; what is around its messages and
    # schema (model, sampling, the schema's form) was encoded again for every call.
    import json

    from convoscope.models import GenerateRequest, Message, OpenAIModel, _http, _openai
    from convoscope.models._capabilities import Capabilities

    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1")
    encoded: list[int] = []
    real = _http.encode
    monkeypatch.setattr(_openai, "encode", lambda value: encoded.append(1) or real(value))
    monkeypatch.setattr(_openai, "_SHELLS", {})
    schema = {"type": "object",
              "properties": {"prompt": {"type": "string"}, "max_tokens": {"type": "integer"}}}
    cases = []
    for structured in ("json_schema", "json_object", "none"):
        for number in range(3):
            said = Message(role="user", content=f'say "hi" ,"prompt": {number}')
            request = GenerateRequest(messages=(said,), json_schema=schema, max_tokens=20, stop=("\n",),
                                      temperature=0.5)
            cases.append((request, Capabilities(structured=structured, logprobs=number == 2)))
    cases.append((GenerateRequest(messages=(Message(role="user", content="x"),), temperature=0), cases[0][1]))
    for request, capabilities in cases:
        body = model._chat_body(request, capabilities)
        content = _openai.chat_content(body, request, capabilities)
        assert json.loads(content) == json.loads(json.dumps(body)) and content == real(body)
    # One encoding per kind of shell: 3 forms x (with and without log-probabilities), and the last.
    assert len(encoded) == 7
    import asyncio

    asyncio.run(model.aclose())


def _statements(store: Store) -> list[tuple[str, bool, int]]:
    """Every statement the store's connections send to the driver: (SQL, executemany?, number
    of parameters or of parameter rows)."""
    import sqlalchemy as sa

    seen: list[tuple[str, bool, int]] = []
    sa.event.listen(store.engine, "before_cursor_execute",
                    lambda _conn, _cursor, sql, params, _context, many: seen.append((sql, many, len(params))))
    sa.event.listen(store.engine, "commit", lambda _conn: seen.append(("COMMIT", False, 0)))
    return seen


def test_a_commit_writes_each_table_in_a_few_multi_row_statements_without_sqlalchemy_per_row_work(
        tmp_path, monkeypatch):
    # Before: Connection.execute(statement, rows) built every row's parameters through the
    # compiled statement (construct_params, once per row) before the driver saw them; then an
    # executemany stepped once per row, each step letting go of the GIL (convoscope._rows).
    from sqlalchemy.sql import compiler

    from convoscope._rows import MOST_PARAMETERS
    from convoscope.models import Generation, ResponseCache

    store = Store(tmp_path / "s.db")
    store.response_cache = cache = ResponseCache(tmp_path / "s.cache.db")
    writer = VerdictWriter(store, "r", supersede=["model_error"])
    seen = _statements(store)
    built = []
    real = compiler.SQLCompiler.construct_params
    monkeypatch.setattr(compiler.SQLCompiler, "construct_params",
                        lambda self, *args, **kwargs: built.append(1) or real(self, *args, **kwargs))
    for number in range(200):
        cache.put(f"c{number}", Generation(text='{"score": 1}', model="m"))
        writer.put([(f"k{number}", _verdict(number))])
    writer.close()
    cache.close()
    assert built == []
    widths = {"insert or replace into convoscope_cache.responses": 3, "insert into verdicts": 10}
    transactions: list[list[tuple[str, bool, int]]] = [[]]
    for sql, many, size in seen:
        if sql == "COMMIT":
            transactions.append([])
        elif sql.lower().startswith("insert"):
            transactions[-1].append((sql.split("(")[0].strip().lower(), many, size))
    committed = [inserts for inserts in transactions if inserts]
    assert len(committed) == writer.commits  # however the puts were grouped into commits:
    written = {table: 0 for table in widths}
    for inserts in committed:  # each table's rows in as few statements as SQLite's limit allows
        assert {table for table, _, _ in inserts} <= set(widths) and not any(many for _, many, _ in inserts)
        for table, width in widths.items():
            sizes = [size // width for name, _, size in inserts if name == table]
            per = MOST_PARAMETERS // width
            assert len(sizes) == -(-sum(sizes) // per) and all(size <= per for size in sizes)
            written[table] += sum(sizes)
    assert written == {"insert or replace into convoscope_cache.responses": 200, "insert into verdicts": 200}
    assert len(store.verdicts_by_key([f"k{n}" for n in range(200)])) == 200


def test_the_cache_file_is_attached_once_per_connection_not_looked_up_every_commit(tmp_path):
    # Before: every commit asked "pragma database_list" whether the cache's file was attached.
    from convoscope.models import Generation, ResponseCache

    store = Store(tmp_path / "s.db")
    store.response_cache = cache = ResponseCache(tmp_path / "s.cache.db")
    writer = VerdictWriter(store, "r")
    seen = _statements(store)
    for number in range(4):
        cache.put(f"c{number}", Generation(text="x", model="m"))
        writer.put([(f"k{number}", _verdict(number))])
        writer.flush()  # one commit each
    writer.close()
    cache.close()
    assert writer.commits >= 4  # at least one per flush (an answer may precede its verdict)
    asked = [sql for sql, _, _ in seen if "database_list" in sql]
    attached = [sql for sql, _, _ in seen if sql.startswith("attach")]
    assert len(attached) == 1 and len(asked) <= 1
    assert len(ResponseCache(tmp_path / "s.cache.db")) == 4


def test_the_writer_commits_on_one_connection_of_its_own(tmp_path):
    # Before: every commit checked a connection out of the pool (and reset it on return); with
    # other threads' connections in the pool, it came back with another one, whose page cache
    # another connection's writes had made stale.
    import sqlalchemy as sa

    store = Store(tmp_path / "s.db")
    checkouts = []
    sa.event.listen(store.engine, "checkout", lambda *_: checkouts.append(1))
    writer = VerdictWriter(store, "r")
    for number in range(5):
        writer.put([(f"k{number}", _verdict(number))])
        writer.flush()
    assert writer.commits == 5 and len(checkouts) == 1
    writer.close()
    assert store.engine.pool.checkedout() == 0  # given back when the writer stops
    assert len(store.verdicts_by_key([f"k{n}" for n in range(5)])) == 5


def test_a_failed_commit_is_retried_on_a_new_connection(tmp_path, monkeypatch):
    import sqlalchemy as sa

    store = Store(tmp_path / "s.db")
    writer = VerdictWriter(store, "r")
    real, failures = store.write, [1]

    def flaky(connection, *args, **kwargs):
        if failures:
            failures.pop()
            raise sa.exc.OperationalError("insert", {}, Exception("database is locked"))
        return real(connection, *args, **kwargs)

    monkeypatch.setattr(store, "write", flaky)
    writer.put([("k", _verdict(1))])
    writer.close()
    assert list(store.verdicts_by_key(["k"])) == ["k"] and store.engine.pool.checkedout() == 0


def test_the_stored_row_is_what_the_verdict_serialises_to(tmp_path):
    # The compiled INSERT and the tuple rows must store what SQLAlchemy's statement stored:
    # value as json.dumps, data as model_dump_json, every column in its place.
    import json
    import sqlite3

    verdicts = [Verdict(item_id="1", criterion="c", rater="model:x", value=3, reason="fine"),
                Verdict(item_id="2", criterion="c", rater="model:x", value=-1),
                Verdict(item_id="3", criterion="c", rater="human:ä", value="ja, sehr \"gut\" ✓"),
                Verdict(item_id="4", criterion="c", rater="model:x", value=None, unscored_reason="idk",
                        raw="Grüße\u2028東京")]
    store = Store(tmp_path / "s.db")
    store.add_many("", [(f"k{n}", verdict) for n, verdict in enumerate(verdicts)])
    store.close()
    with sqlite3.connect(tmp_path / "s.db") as connection:
        rows = connection.execute("select scope, task_key, run_id, item_id, criterion, rater, value, "
                                  "unscored_reason, data, attempts from verdicts order by id").fetchall()
    assert rows == [("", f"k{n}", "", v.item_id, v.criterion, v.rater,
                     None if v.value is None else json.dumps(v.value), v.unscored_reason,
                     v.model_dump_json(), 1) for n, v in enumerate(verdicts)]
