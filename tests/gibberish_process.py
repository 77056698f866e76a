"""`convoscope gibberish ANSWERS --out FLAGS` in a fresh interpreter, for tests that ask what the
command's process did (which modules it imported, how many threads it started): such things are
properties of a process, and OpenBLAS reads its thread count once, when numpy is imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_COMMAND = """
import os, sys
from convoscope.cli import main
sys.argv = ["convoscope", "gibberish", sys.argv[1], "--out", sys.argv[2]]
try:
    main()
except SystemExit as stop:
    assert not stop.code, stop.code
"""


def gibberish_then(answers: Path, out: Path, then: str, **run: object) -> str:
    """Run the command on ``answers``, then the Python code ``then`` in the same process; its
    standard output. ``run``: more arguments for ``subprocess.run`` (``cwd``, ``env``)."""
    return subprocess.run([sys.executable, "-c", _COMMAND + then, str(answers), str(out)],
                          capture_output=True, text=True, check=True, **run).stdout  # type: ignore[call-overload]
