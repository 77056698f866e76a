"""A judged item costs one serialisation of its request and one durable write (issue 39, observation 1).

Before: the ~4.5 kB request was serialised three times (the body sent, the response cache's key,
the task key) and every verdict was written twice (its answer by the response cache's writer, in
the cache file; the verdict by the run's writer, in the store), each in transactions of its own.
Against a real server on 127.0.0.1 (the canned proxy), into a real SQLite store. And the start-up
before the first request no longer imports tenacity (only retries need it) or statistics, nor
compiles the offline safety rules a run without personas never applies.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from functools import cached_property

import pytest

from convoscope.criteria import Criterion, Scale
from convoscope.items import Item
from convoscope.judges import RubricJudge
from convoscope.models import GenerateRequest, OpenAIModel, cache_key
from convoscope.runs import judge_async

CRITERION = Criterion(name="quality", question="Good?", definition="Overall quality.",
                      scale=Scale(kind="range", minimum=1, maximum=5))
MARK = "zebra-crossing-7"  # in every answer judged: what serialises a request shows it


def items(n):
    return [Item(id=f"i{i}", question="What would improve the bus?", response=f"{MARK} {i} more buses")
            for i in range(n)]


async def judged(proxy, tmp_path, n):
    return await judge_async(items(n), [CRITERION], f"openai:canned@{proxy.base_url}", mode="chat",
                             store=tmp_path / "s.db", concurrency=4)


async def test_the_body_sent_and_both_keys_are_cut_from_one_serialisation(canned_proxy, tmp_path):
    result = await judged(canned_proxy, tmp_path, 3)
    model = OpenAIModel("canned", base_url=canned_proxy.base_url)
    judge = RubricJudge(model, mode="chat")
    sent = [recorded.raw for recorded in canned_proxy.requests if MARK.encode() in recorded.raw]
    with sqlite3.connect(tmp_path / "s.cache.db") as connection:
        cached = {key for (key,) in connection.execute("select key from responses")}
    stored = {verdict.item_id for verdict in result.verdicts}
    for item in items(3):
        request = judge.request(item, CRITERION)
        wire = request.wire
        assert wire == request.model_dump_json().encode()  # what the task key always hashed
        messages = wire[len(b'{"messages":'):wire.index(b',"prompt":')]
        schema = wire[wire.index(b',"json_schema":') + 15:wire.rindex(b',"max_tokens":')]
        body = next(raw for raw in sent if f"{MARK} {item.id[1:]} ".encode() in raw)
        assert body.startswith(b'{"model":"canned","messages":' + messages + b',')  # the very bytes
        assert schema in body
        digest = hashlib.sha256(model.name.encode() + b"\n" + wire).hexdigest()
        assert any(len(key) == 64 and digest.startswith(key.removeprefix("v2:")) for key in cached)
        assert cache_key(model.name, request) in cached
        assert item.id in stored
    await model.aclose()


async def test_a_judged_item_serialises_its_request_once(canned_proxy, tmp_path, monkeypatch):
    computed: list[int] = []
    dumped: list[str] = []

    def wire(self):
        computed.append(id(self))
        return self.__pydantic_serializer__.to_json(self)

    counting = cached_property(wire)
    counting.__set_name__(GenerateRequest, "wire")
    monkeypatch.setattr(GenerateRequest, "wire", counting)
    for name in ("model_dump", "model_dump_json"):
        original = getattr(GenerateRequest, name)
        monkeypatch.setattr(GenerateRequest, name, lambda self, *a, _o=original, _n=name, **k:
                            dumped.append(_n) or _o(self, *a, **k))
    plain_dumps = json.dumps

    def dumps(value, *args, **kwargs):
        text = plain_dumps(value, *args, **kwargs)
        if MARK in text and not isinstance(value, str):  # a string is quoted into the prompt (_quote)
            dumped.append("json.dumps")
        return text

    monkeypatch.setattr(json, "dumps", dumps)
    result = await judged(canned_proxy, tmp_path, 5)
    assert [verdict.value for verdict in result.verdicts] == [1] * 5
    # Never twice for one request, and nothing else; a chat request's wire is mostly cut from
    # its criterion's template, not computed here at all (tests/runs/test_planning_cost.py).
    assert len(computed) == len(set(computed)) <= 5
    assert dumped == []


async def test_a_verdict_and_its_answer_are_committed_in_one_transaction(canned_proxy, tmp_path,
                                                                        monkeypatch):
    statements: dict[int, list[str]] = {}
    connect = sqlite3.connect

    def traced(*args, **kwargs):
        connection = connect(*args, **kwargs)
        log = statements.setdefault(id(connection), [])
        connection.set_trace_callback(log.append)
        return connection

    monkeypatch.setattr(sqlite3, "connect", traced)
    monkeypatch.setattr(sqlite3.dbapi2, "connect", traced)  # what SQLAlchemy's pysqlite calls
    result = await judged(canned_proxy, tmp_path, 6)
    assert len(result.verdicts) == 6
    writes = []  # (inserts answers, inserts verdicts) of every transaction that wrote either
    for log in statements.values():
        answers = verdicts = False
        for statement in log:
            text = statement.lower()
            answers |= text.startswith("insert or replace into convoscope_cache.responses") or \
                text.startswith("insert or replace into responses")
            verdicts |= text.startswith("insert into verdicts ")  # not a migration's verdicts_v4
            if text.startswith("commit"):
                if answers or verdicts:
                    writes.append((answers, verdicts))
                answers = verdicts = False
    assert writes and all(both == (True, True) for both in writes), writes
    with sqlite3.connect(tmp_path / "s.cache.db") as connection:
        assert connection.execute("select count(*) from responses").fetchone()[0] == 6


@pytest.mark.parametrize("n", [3])
async def test_a_resumed_run_finds_the_answers_committed_with_the_verdicts(canned_proxy, tmp_path, n):
    # The answers went into the cache's file through the store's writer: a run into a new store
    # on the same cache asks the server nothing.
    await judged(canned_proxy, tmp_path, n)
    asked = len(canned_proxy.requests)
    again = await judge_async(items(n), [CRITERION], f"openai:canned@{canned_proxy.base_url}", mode="chat",
                              store=tmp_path / "other.db", cache_path=tmp_path / "s.cache.db")
    assert [verdict.cached for verdict in again.verdicts] == [True] * n
    assert len([r for r in canned_proxy.requests[asked:] if MARK.encode() in r.raw]) == 0


def test_judge_starts_without_retry_or_pooling_libraries_or_compiled_safety_rules():
    probe = ("import sys\nimport convoscope.cli._judge\nfrom convoscope.judges import _safety\n"
             "print('tenacity' in sys.modules, 'statistics' in sys.modules,"
             " any(pattern._compiled is not None for _, _, pattern in _safety._RULES))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False", "False"]


# What `convoscope judge` imports or does only after its first request (issue 39, observation 2):
# httpx (with the command-line tool its import brings: pygments, rich's syntax view) and
# urllib.request, which the default sender (httpcore) and a plain http:// endpoint never need;
# rich's progress bar, never drawn but on a terminal, and its table, for the summary at the end;
# aiolimiter, for per-minute budgets only.
# sqlalchemy: on a new SQLite store the first requests leave before the store is set up (issue 39).
# httpcore and anyio: the default sender speaks h11 on asyncio's own streams (models/_net.py).
LAZY_UNTIL_FIRST_REQUEST = ("httpx", "pygments", "rich.syntax", "urllib.request", "rich.progress",
                            "rich.table", "aiolimiter", "sqlalchemy", "httpcore", "anyio")

FIRST_REQUEST_PROBE = r"""
import gc, json, sys
import yaml.composer

out, composed, sent = sys.argv.pop(1), [], []
compose = yaml.composer.Composer.compose_document
yaml.composer.Composer.compose_document = lambda self: composed.append(1) or compose(self)
from convoscope.models._net import Pool
request = Pool.request

async def first(self, method, url, *options):
    if not sent:
        sent.append({"url": url.decode() if isinstance(url, bytes) else str(url),
                     "imported": [name for name in LAZY if name in sys.modules],
                     "pure_python_yaml": len(composed), "collecting": gc.isenabled(),
                     "frozen": gc.get_freeze_count()})
    return await request(self, method, url, *options)

Pool.request = first
from convoscope.cli import main
try:
    main()
finally:
    with open(out, "w") as file:
        json.dump(sent, file)
"""


def test_judge_sends_its_first_request_before_importing_httpx_or_reading_yaml_in_python(
        canned_proxy, tmp_path):
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(
        {"id": str(n), "question": "What would improve the bus?", "response": f"More buses ({n})"}) + "\n"
        for n in range(12)))
    probe = f"LAZY = {LAZY_UNTIL_FIRST_REQUEST!r}\n" + FIRST_REQUEST_PROBE
    env = {key: value for key, value in os.environ.items() if not key.lower().endswith("_proxy")}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "first.json"), "judge", "items.jsonl",
         "--criterion", "survey/effort", "--judge", f"openai:canned@{canned_proxy.base_url}",
         "--mode", "chat", "--store", "s.db", "--concurrency", "4", "--out", "out.jsonl"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (first,) = json.loads((tmp_path / "first.json").read_text())
    assert first["url"].startswith(canned_proxy.base_url.removesuffix("/v1"))
    assert first["imported"] == []
    assert first["pure_python_yaml"] == 0  # the built-in suite went through libyaml
    assert first["collecting"] and first["frozen"] > 0  # imports frozen, collection back on
    # The answers sent before the store existed are stored all the same, and in --out.
    stored = sqlite3.connect(tmp_path / "s.db").execute("select count(*) from verdicts").fetchone()[0]
    assert stored == 12
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 12
    # ... each asked once (the engine took the early calls' outcomes), never more than 4 at once.
    judged = [request for request in canned_proxy.requests if request.body.get("max_tokens") != 8]
    assert len(judged) == 12 and canned_proxy.peak_in_flight <= 4  # not the capability probes
