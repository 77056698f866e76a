"""The suite tests what a user installs: the built wheel, with every file the package reads.

`scripts/test.sh` (the README's test command, run by CI on a clean clone) builds the wheel and
installs it, not the checkout in editable mode, and sets ``CONVOSCOPE_TEST_WHEEL=1``. Issue 35,
observation 1: the wheel lacked ``card/data/card_probes.csv`` (package data listed other folders),
so ``convoscope card`` crashed on every normal install while the editable suite passed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from patience import PATIENT_S

import convoscope

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "convoscope"
INSTALLED = Path(convoscope.__file__).resolve().parent


def data_files() -> list[str]:
    """Every file of the source package that is not Python: what the package reads at run time
    (suites, word lists, templates, catalogues, probes, decision models)."""
    if not SOURCE.is_dir():
        pytest.skip("needs the checkout's src/ folder beside the tests")
    found = sorted(
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts
    )
    assert found, "the package has data files; finding none means the search is broken"
    return found


def test_the_suite_imports_the_installed_wheel_not_the_checkout():
    if os.environ.get("CONVOSCOPE_TEST_WHEEL") != "1":
        pytest.skip("scripts/test.sh sets CONVOSCOPE_TEST_WHEEL=1 after installing the built wheel")
    assert not INSTALLED.is_relative_to(ROOT), f"convoscope imported from the checkout: {INSTALLED}"
    direct = metadata.distribution("convoscope").read_text("direct_url.json")
    if direct:
        assert not json.loads(direct).get("dir_info", {}).get("editable", False), direct


def test_every_data_file_of_the_package_is_installed():
    missing = [name for name in data_files() if not (INSTALLED / name).is_file()]
    assert not missing, f"not in the installed package {INSTALLED}: {missing}"


def test_every_data_file_of_the_package_is_in_the_wheel(tmp_path):
    """Built here from a clean copy of the sources, so an editable development install is checked
    too. A copy, not the checkout: setuptools reads a stale ``*.egg-info/SOURCES.txt`` left by an
    earlier build and would ship files the configuration no longer names (or hide ones it omits)."""
    wanted = data_files()
    sources = tmp_path / "sources"
    shutil.copytree(
        ROOT / "src", sources / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "*.pyc")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, sources / name)
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(tmp_path / "dist"),
            str(sources),
        ],
        capture_output=True,
        text=True,
        timeout=PATIENT_S,
        cwd=tmp_path,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("convoscope-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    missing = [name for name in wanted if f"convoscope/{name}" not in names]
    assert not missing, f"not in {wheel.name}: {missing}"
