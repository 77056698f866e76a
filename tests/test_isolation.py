"""The suite reads and writes no state outside its own temporary folders (issue 35, observation 7).

Ray 2.60 leaves ``~/.ray/auth_token`` behind after its first local cluster; with that file in the
user's home both Ray tests failed ("InvalidAuthToken"). The suite now starts every run with a home
of its own (``tests/conftest.py``), so what an earlier run left in the user's home cannot be seen.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from patience import PATIENT_S

HERE = Path(__file__).resolve().parent


def test_the_suite_runs_with_a_home_of_its_own(user_home):
    home = Path(os.environ["HOME"])
    assert str(home) != user_home
    assert home == Path.home()
    assert home.resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "MPLCONFIGDIR", "HF_HOME", "RAY_TMPDIR"):
        assert Path(os.environ[name]).resolve().is_relative_to(home.resolve()), name


def test_what_an_earlier_run_left_in_the_users_home_is_not_seen(tmp_path):
    """A home holding Ray's stale token, as a machine where Ray ran once has: a test run started
    there sees an empty home of its own."""
    planted = tmp_path / "user-home"
    (planted / ".ray").mkdir(parents=True)
    (planted / ".ray" / "auth_token").write_text("a-token-from-an-earlier-cluster\n")
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "from pathlib import Path\n"
        "def test_home_is_clean():\n"
        "    assert not (Path.home() / '.ray' / 'auth_token').exists()\n"
        "    assert not list(Path.home().iterdir())\n"
    )
    # The probe runs under a copy of this suite's conftest, as every test does.
    for name in ("conftest.py", "patience.py"):
        (tmp_path / name).write_text((HERE / name).read_text())
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--rootdir",
            str(tmp_path),
            str(probe),
        ],
        env={**os.environ, "HOME": str(planted)},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=PATIENT_S,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert (planted / ".ray" / "auth_token").read_text() == "a-token-from-an-earlier-cluster\n"
