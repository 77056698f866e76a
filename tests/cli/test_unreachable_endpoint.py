"""A run against an endpoint that cannot be reached, or that refuses the key, stops at once with
one line and exit 3 (work outstanding) (issue 35, observation 6).

Before: ``synth dialogues`` wrote "0 turns, ended by user_error" for every context, and ``judge``
recorded a model_error for every item, each after its own retries. Real sockets on 127.0.0.1: a
port nothing listens on, and the fault proxy answering HTTP 401 to everything.
"""

from __future__ import annotations

import json
import socket
import sqlite3

import pytest
from click.testing import CliRunner
from faultproxy import Fault

from convoscope.cli import cli
from convoscope.cli._app import _register

_register()
N_ITEMS = 30


def free_port() -> int:
    with socket.socket() as sock:  # bound, then closed: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def invoke(*argv: str):
    return CliRunner().invoke(cli, [*argv], env={"COLUMNS": "300", "OPENAI_API_KEY": ""})


def one_stop_line(result, *expected: str) -> str:
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    for text in expected:
        assert text in errors[0], errors[0]
    return errors[0]


@pytest.fixture
def items(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({"id": f"i{n}", "response": f"Answer {n}."}) + "\n"
                            for n in range(N_ITEMS)))
    return path


@pytest.fixture
def contexts(tmp_path):
    path = tmp_path / "contexts.jsonl"
    result = invoke("synth", "contexts", "--n", "6", "--languages", "en", "--out", str(path))
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def refusing(canned_proxy):
    canned_proxy.always(Fault.status(401, '{"error": {"message": "invalid api key"}}'))
    return canned_proxy


def stored_verdicts(store) -> int:
    with sqlite3.connect(store) as connection:
        return connection.execute("SELECT count(*) FROM verdicts").fetchone()[0]


def test_judge_against_a_closed_port_stops_with_one_line_and_stores_no_model_error(items, tmp_path):
    port = free_port()
    store = tmp_path / "s.db"
    result = invoke("judge", str(items), "--criterion", "survey/effort", "--judge",
                    f"openai:m@http://127.0.0.1:{port}/v1", "--store", str(store), "--no-cache")
    one_stop_line(result, f"127.0.0.1:{port}", "cannot connect")
    assert stored_verdicts(store) == 0  # no model_error verdict per item: the work is outstanding


def test_judge_against_a_server_that_answers_401_stops_after_a_few_requests(items, tmp_path, refusing):
    store = tmp_path / "s.db"
    result = invoke("judge", str(items), "--criterion", "survey/effort", "--judge",
                    f"openai:m@{refusing.base_url}", "--store", str(store), "--no-cache")
    one_stop_line(result, "not authorised (HTTP 401)")
    assert stored_verdicts(store) == 0
    assert len(refusing.requests) <= 8  # the in-flight ones at most, never one per item


def test_synth_dialogues_against_a_closed_port_stops_with_one_line(contexts, tmp_path):
    dead = f"openai:m@http://127.0.0.1:{free_port()}/v1"
    out = tmp_path / "dialogues.jsonl"
    result = invoke("synth", "dialogues", str(contexts), "--user", dead, "--chatbot", dead, "--judge", "none",
                    "--out", str(out), "--no-cache")
    one_stop_line(result, "cannot connect")
    assert "ended by user_error" not in result.output
    assert not out.exists() or out.read_text() == ""


def test_synth_dialogues_against_a_server_that_answers_401_stops_with_one_line(contexts, tmp_path, refusing):
    model = f"openai:m@{refusing.base_url}"
    out = tmp_path / "dialogues.jsonl"
    result = invoke("synth", "dialogues", str(contexts), "--user", model, "--chatbot", model,
                    "--judge", "none", "--out", str(out), "--no-cache")
    one_stop_line(result, "not authorised (HTTP 401)")
    assert "ended by user_error" not in result.output
    assert len(refusing.requests) <= 4  # the dialogues in flight (--concurrency 4), not one per context
