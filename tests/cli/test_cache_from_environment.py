"""``CONVOSCOPE_CACHE`` names the response cache of every command that has ``--cache`` (judge,
survey score, synth dialogues): one cache for runs in several folders, as a team sharing a machine
(or the documented-blocks test) wants. ``--cache`` and ``--no-cache`` still win."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner

from convoscope.cli import cli
from convoscope.cli._app import _register

_register()


def _judge(folder, base_url, *extra, env=None):
    folder.mkdir(exist_ok=True)
    items = folder / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{n}", "response": f"Answer {n}: more trains."}) + "\n"
                             for n in range(3)))
    return CliRunner().invoke(cli, ["judge", str(items), "--criterion", "survey/effort", "--mode",
                                    "completion", "--judge", f"openai:canned@{base_url}", "--store",
                                    str(folder / "s.db"), *extra], env=env or {})


def _rows(path):
    with sqlite3.connect(path) as connection:
        [(count,)] = connection.execute("select count(*) from sqlite_master where type = 'table'")
        return connection.execute("select count(*) from responses").fetchone()[0] if count else 0


def test_runs_in_two_folders_share_the_cache_the_environment_names(tmp_path, canned_proxy):
    shared = tmp_path / "shared.cache.db"
    env = {"CONVOSCOPE_CACHE": str(shared)}
    first = _judge(tmp_path / "a", canned_proxy.base_url, env=env)
    assert first.exit_code == 0, first.output
    asked = len(canned_proxy.requests)
    assert shared.exists() and _rows(shared) > 0
    assert not (tmp_path / "a" / "s.cache.db").exists()  # not beside the store
    second = _judge(tmp_path / "b", canned_proxy.base_url, env=env)
    assert second.exit_code == 0, second.output
    assert len(canned_proxy.requests) == asked  # every answer came from the shared cache
    assert "cache hits" in second.output and "│ 3 " in second.output.split("cache hits")[1][:40]


def test_cache_and_no_cache_on_the_command_line_win_over_the_environment(tmp_path, canned_proxy):
    shared, own = tmp_path / "shared.cache.db", tmp_path / "own.cache.db"
    env = {"CONVOSCOPE_CACHE": str(shared)}
    assert _judge(tmp_path / "a", canned_proxy.base_url, "--cache", str(own), env=env).exit_code == 0
    assert own.exists() and not shared.exists()
    assert _judge(tmp_path / "b", canned_proxy.base_url, "--no-cache", env=env).exit_code == 0
    assert not shared.exists()
