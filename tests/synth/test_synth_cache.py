"""Issue 12, observation 2: the synth command built its models beside the shared constructor and
dropped an empty response cache as falsy, so a first run never wrote its cache and a re-run paid
for every call again. The models here are a scripted backend registered under its own prefix
(unit level); the cache is the real SQLite file the command writes."""

from __future__ import annotations

import sqlite3

from click.testing import CliRunner
from synth_scripted import ScriptedModel, role_of

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.models import register_backend


def scripted_reply(request):
    role = role_of(request)
    if role == "judge":
        return "yes"
    if role.startswith("user"):
        return "Could you suggest a good book for a long train ride?"
    return "Try a mystery novel; the pages fly by."


def scripted_backend(rest: str, **options) -> ScriptedModel:
    return ScriptedModel(scripted_reply, name=f"scripted-{rest or 'model'}")


def test_synth_cache_filled_after_a_run(tmp_path, monkeypatch):
    _register()
    register_backend("scripted-synth", scripted_backend)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    made = runner.invoke(cli, ["synth", "contexts", "--n", "1", "--languages", "en",
                               "--out", "contexts.jsonl"])
    assert made.exit_code == 0, made.output
    command = ["synth", "dialogues", "contexts.jsonl", "--user", "scripted-synth:user",
               "--judge", "none", "--chatbot", "scripted-synth:bot", "--max-turns", "2",
               "--out", "dialogues.jsonl"]
    first = runner.invoke(cli, command)
    assert first.exit_code == 0, first.output
    with sqlite3.connect(tmp_path / "dialogues.cache.db") as db:
        cached = db.execute("select count(*) from responses").fetchone()[0]
    assert cached > 0  # the cache started empty and was still used
