"""Issue 35, observation 5: a plug-in judge's identity includes its distribution's name and
version, so installing a new release of the package judges again instead of serving the old
release's verdicts. The test package in ``acme_plugin/`` is installed offline at 0.1.0 and at
0.2.0 (whose judge also counts "cheers" as thanks, with the same declared judge version)."""

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

ROOT = Path(__file__).parents[2]
PACKAGE = Path(__file__).parent / "acme_plugin"


def _install(work: Path, version: str, *, edit: tuple[str, str] | None = None) -> Path:
    source = shutil.copytree(PACKAGE, work / f"source-{version}")
    project = source / "pyproject.toml"
    project.write_text(project.read_text().replace('version = "0.1.0"', f'version = "{version}"'))
    if edit is not None:
        code = source / "acme_judges" / "__init__.py"
        text = code.read_text()
        assert edit[0] in text
        code.write_text(text.replace(*edit))
    target = work / f"site-{version}"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(source)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"pip could not install the test plugin package: {done.stderr[-2000:]}")
    return target


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("acme-releases")
    cheers = ('("thank", "grateful")', '("thank", "grateful", "cheers")')  # 0.2.0 also counts "cheers"
    return {"0.1.0": _install(work, "0.1.0"), "0.2.0": _install(work, "0.2.0", edit=cheers)}


def _judge(site: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    items = tmp_path / "items.jsonl"
    if not items.exists():
        rows = [{"id": f"i{n}", "response": text} for n, text in enumerate(
            ["Thanks!", "cheers, mate", "late", "Cheers for that", "grateful", "no", "ok", "cheers"])]
        items.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), import_path()])}
    return subprocess.run(
        [sys.executable, "-m", "convoscope", "judge", str(items), "--criterion", "acme:gratitude",
         "--judge", "python:acme-thanks", "--store", str(tmp_path / "run.db"),
         "--out", str(tmp_path / "out.jsonl")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=PATIENT_S)


def _row(stdout: str, name: str) -> str:
    line = next(line for line in stdout.splitlines() if name in line)
    return line.split(name, 1)[1].strip(" │|")


def _values(tmp_path: Path) -> dict[str, int]:
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    return {row["item_id"]: row["value"] for row in rows}


def test_installing_a_new_release_of_a_plugin_judges_again(releases, tmp_path):
    first = _judge(releases["0.1.0"], tmp_path)
    assert first.returncode == 0, first.stderr
    assert _row(first.stdout, "verdicts (this run)") == "8"
    assert _values(tmp_path)["i1"] == 0  # 0.1.0 does not know "cheers"
    same = _judge(releases["0.1.0"], tmp_path)
    assert _row(same.stdout, "resumed (already done)") == "8"  # the same release resumes
    upgraded = _judge(releases["0.2.0"], tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    # Before: "resumed 8" and 0.1.0's values served after the upgrade.
    assert _row(upgraded.stdout, "verdicts (this run)") == "8"
    assert _values(tmp_path)["i1"] == 1 and _values(tmp_path)["i7"] == 1


def test_a_plugin_judges_identity_names_its_distribution_and_the_declared_version(releases, tmp_path):
    """In a fresh interpreter: this process may hold another release's module already (the
    identity is read from the module a judge's code comes from)."""
    script = (
        "import json\n"
        "import convoscope as cs\n"
        "from convoscope.judges import load_judge\n"
        "judge = load_judge('python:acme_judges:says_thanks')\n"
        "bumped = cs.make_judge(judge, version='2')\n"
        "print(json.dumps([judge.identity(), bumped.identity()]))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(releases["0.2.0"]), import_path()])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=PATIENT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    identity, bumped = json.loads(done.stdout.strip().splitlines()[-1])
    assert identity["package"] == ["acme-convoscope-plugins==0.2.0"] and identity["version"] == "1"
    # The author's own version, beside the release's.
    assert bumped["version"] == "2" and bumped["package"] == identity["package"]


def test_a_judge_written_here_and_not_installed_keeps_the_identity_it_had():
    @cs.python_judge(name="local", version="3")
    def local(item, criterion):
        return 1

    assert local.identity() == {"kind": "python", "name": "local", "version": "3", "params": {}, "init": {}}
