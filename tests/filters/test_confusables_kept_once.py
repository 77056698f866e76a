"""`convoscope gibberish --lang auto` (issue 39, observation 8): the table of letters that look
Latin (TR39 confusables) is built from the confusable-homoglyphs package once per machine and
kept; a later process reads the kept table (279 letters) instead of loading the package's
confusables data (about 0.1 s), and folds text alike."""

import subprocess
import sys

from convoscope.text import _fold

# Run in a fresh interpreter: which modules a process loads is a property of the process.
_PROBE = """
import sys
from convoscope.text import fold
print(fold(sys.argv[1], casefold=False))
print("confusable_homoglyphs.confusables" in sys.modules)
"""

MIXED = "Тhe еffort was grеat"  # Cyrillic Т and е inside Latin words


def _fold_in_a_new_process(cache, text: str) -> tuple[str, bool]:
    env = {"XDG_CACHE_HOME": str(cache), "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    found = subprocess.run([sys.executable, "-c", _PROBE, text], capture_output=True, text=True,
                           check=True, env=env)
    folded, loaded = found.stdout.splitlines()
    return folded, loaded == "True"


def test_a_second_process_folds_confusables_without_loading_the_package_data(tmp_path):
    first, loaded_first = _fold_in_a_new_process(tmp_path, MIXED)
    second, loaded_second = _fold_in_a_new_process(tmp_path, MIXED)
    assert first == second == "The effort was great"
    assert loaded_first and not loaded_second


def test_the_kept_table_is_the_table_built_from_the_package(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = _fold._build_latin_skeleton()
    _fold._latin_skeleton.cache_clear()
    try:
        first = _fold._latin_skeleton()  # builds and keeps
        _fold._latin_skeleton.cache_clear()
        kept = _fold._latin_skeleton()  # reads the kept file
    finally:
        _fold._latin_skeleton.cache_clear()
    assert first == kept == built
    assert len(built) > 200 and built["е"] == "e" and built["Т"] == "T"


def test_a_damaged_kept_table_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _fold._latin_skeleton.cache_clear()
    try:
        _fold._latin_skeleton()
        (kept,) = [path for path in (tmp_path / "convoscope").iterdir() if path.suffix == ".json"]
        kept.write_text('{"е": ', encoding="utf-8")
        _fold._latin_skeleton.cache_clear()
        assert _fold._latin_skeleton() == _fold._build_latin_skeleton()
    finally:
        _fold._latin_skeleton.cache_clear()
