"""Judges, backends and suites from another package (issue 27, observation 1): the package in
``acme_plugin/`` is installed with pip (into a folder of its own, not the shared environment)
and reached through its entry points, in Python and from the command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from installed import import_path
from patience import PATIENT_S

import convoscope as cs
from convoscope.errors import ConfigError

ROOT = Path(__file__).parents[2]
PACKAGE = Path(__file__).parent / "acme_plugin"


@pytest.fixture(scope="session")
def acme_site(tmp_path_factory) -> Path:
    """The acme package, installed by pip from a copy of its folder (setuptools writes its build
    files beside the sources): offline, no dependencies, into a folder of its own."""
    work = tmp_path_factory.mktemp("acme")
    source = shutil.copytree(PACKAGE, work / "source")
    target = work / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(source)], capture_output=True, text=True)
    if installed.returncode != 0:
        pytest.fail(f"pip could not install the test plugin package: {installed.stderr[-2000:]}")
    return target


@pytest.fixture
def acme(acme_site, monkeypatch):
    """The installed package on sys.path for this test only; backends it registers are undone."""
    from convoscope.models import _registry

    monkeypatch.syspath_prepend(str(acme_site))
    monkeypatch.setattr(_registry, "_BACKENDS", dict(_registry._BACKENDS))
    return acme_site


def test_without_the_package_its_names_are_unknown(tmp_path):
    with pytest.raises(ConfigError, match="no convoscope.judges entry point 'acme-thanks'"):
        cs.judge([cs.Item(id="a", response="x")], [cs.criterion("survey:effort")], "python:acme-thanks",
                 store=tmp_path / "run.db")
    assert "acme" not in cs.list_suites()


def test_an_installed_judge_suite_and_backend_are_found_by_name(acme, tmp_path):
    from convoscope.judges import load_judge
    from convoscope.models import open_model

    assert "acme" in cs.list_suites()
    gratitude = cs.criterion("acme:gratitude")
    assert gratitude.suite == "acme" and gratitude.scale.binary_labels == ("thanks", "no-thanks")
    assert [c.name for c in cs.suite("acme")] == ["gratitude", "thoroughness"]
    thanks = load_judge("python:acme-thanks")
    assert thanks.rater == "python:acme-thanks" and thanks.version == "1"
    length = load_judge("python:acme-length")  # a judge class, built with its defaults
    assert length.identity()["init"] == {"words_per_point": 5}
    model = open_model("acme-scripted:4")
    assert model.name == "acme-scripted:4"
    items = [cs.Item(id="a", response="Thanks a lot, that was quick and clear."),
             cs.Item(id="b", response="no")]
    result = cs.judge(items, [gratitude], ["python:acme-thanks", "acme-scripted:1"], store=tmp_path / "r.db",
                      cache_path=None)
    members = {(v.rater, v.item_id): v.value for v in result.member_verdicts}
    assert members == {("python:acme-thanks", "a"): 1, ("python:acme-thanks", "b"): 0,
                       ("model:acme-scripted:1", "a"): 1, ("model:acme-scripted:1", "b"): 1}


def _convoscope(args, acme_site, cwd):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(acme_site), import_path()])}
    return subprocess.run([sys.executable, "-m", "convoscope", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=PATIENT_S)


def _summary_row(stdout: str, name: str) -> str:
    line = next(line for line in stdout.splitlines() if name in line)
    return line.split(name, 1)[1].strip(" │|")


def test_the_cli_judges_with_an_installed_package_beside_a_model_backend(acme_site, tmp_path):
    items = tmp_path / "items.jsonl"
    rows = [{"id": "a", "response": "Thank you, the parcel came today."},
            {"id": "b", "response": "late again"}, {"id": "c", "response": "crash"}]
    items.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "verdicts.jsonl"
    args = ["judge", str(items), "--criterion", "acme:gratitude", "--judge", "python:acme_judges:says_thanks",
            "--judge", "acme-scripted:1", "--store", str(tmp_path / "run.db"), "--out", str(out),
            "--max-unscored", "1"]
    done = _convoscope(args, acme_site, tmp_path)
    assert done.returncode == 0, done.stderr
    verdicts = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    said = {(v["rater"], v["item_id"]): (v["value"], v["unscored_reason"]) for v in verdicts}
    assert said[("python:acme-thanks", "a")] == (1, None) and said[("python:acme-thanks", "b")] == (0, None)
    crash = next(v for v in verdicts if v["rater"] == "python:acme-thanks" and v["item_id"] == "c")
    assert crash["unscored_reason"] == "judge_error" and "RuntimeError: cannot read c" in crash["raw"]
    assert said[("model:acme-scripted:1", "b")] == (1, None)
    assert {v["rater"] for v in verdicts} == {"python:acme-thanks", "model:acme-scripted:1", "panel:majority"}
    assert _summary_row(done.stdout, "model calls") == "3"  # the scripted backend's; none for Python
    again = _convoscope(args, acme_site, tmp_path)
    assert again.returncode == 0 and _summary_row(again.stdout, "resumed (already done)") == "3"
    by_entry_point = _convoscope(["judge", str(items), "--criterion", "acme:gratitude", "--judge",
                                  "python:acme-thanks", "--store", str(tmp_path / "run.db"),
                                  "--max-unscored", "1"], acme_site, tmp_path)
    assert by_entry_point.returncode == 0, by_entry_point.stderr
    # The same judge by its entry-point name asks what the panel's member asked: a task is what it
    # asks, so its three verdicts are found in the store, not judged again.
    assert _summary_row(by_entry_point.stdout, "resumed (already done)") == "3"
    assert _summary_row(by_entry_point.stdout, "verdicts (this run)") == "0"


def test_a_missing_python_judge_is_a_one_line_error_before_any_work(acme_site, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "response": "hi"}\n', encoding="utf-8")
    done = _convoscope(["judge", str(items), "--criterion", "survey:effort", "--judge",
                        "python:acme_judges:nope", "--store", str(tmp_path / "run.db")], acme_site, tmp_path)
    assert done.returncode == 2
    assert "error: judge 'python:acme_judges:nope': acme_judges has no 'nope'" in done.stderr
