"""The front door (issue 12): ``import convoscope as cs`` offers the verbs, stays light, and the
README's notebook code runs as written, inside a running event loop as Jupyter has one."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import convoscope as cs

ROOT = Path(__file__).parents[1]
HEAVY = ("convoscope.models", "convoscope.analysis", "convoscope.store", "numpy", "pydantic",
         "sqlalchemy", "llama_cpp", "httpx")


def readme_notebook_code() -> str:
    """The Python block of the README's "From Python / a notebook" section, as written."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## From Python / a notebook", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_import_convoscope_loads_nothing_heavy():
    probe = f"import sys, convoscope; print([m for m in {HEAVY!r} if m in sys.modules])"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def test_every_front_door_name_resolves_and_is_listed():
    for name in cs.__all__:
        assert getattr(cs, name) is not None, name
    assert {"read_items", "criterion", "suite", "judge", "agree", "metaeval", "read_verdicts",
            "Store", "RunResult", "RaterKind", "ConvoscopeError"} <= set(cs.__all__)
    assert set(cs.__all__) <= set(dir(cs)) and set(cs.__all__) == set(cs._EXPORTS)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        cs.nope  # noqa: B018


def test_dir_lists_only_the_public_names():
    # Before: dir(cs) listed Any, TYPE_CHECKING, annotations and importlib beside the verbs.
    assert [name for name in dir(cs) if not name.startswith("__")] == sorted(cs.__all__)
    assert "__version__" in dir(cs)


def test_the_error_a_notebook_meets_most_is_on_the_front_door():
    from convoscope.models import ModelError

    assert cs.ModelError is ModelError and issubclass(cs.ModelError, cs.ConvoscopeError)


def test_the_verbs_are_the_library_functions_not_copies():
    from convoscope.analysis import agreement_table
    from convoscope.criteria import get_criterion
    from convoscope.runs import judge

    assert cs.judge is judge and cs.agree is agreement_table and cs.criterion is get_criterion
    assert [c.name for c in cs.suite("survey")][:3] == ["effort", "relevance", "completeness"]


def test_a_bad_input_file_is_a_convoscope_error_naming_line_and_field(tmp_path):
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"id": "a", "response": "fine"}\n{"response": "no id"}\n', encoding="utf-8")
    with pytest.raises(cs.LocatedError) as caught:
        cs.read_items(bad)
    assert isinstance(caught.value, cs.ConvoscopeError)
    assert caught.value.line == 2 and caught.value.field == "id"


@pytest.mark.slow
async def test_the_readme_notebook_code_runs_inside_a_running_event_loop(tmp_path, monkeypatch):
    pytest.importorskip("llama_cpp")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    code = readme_notebook_code()
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    cell: dict = {}
    exec(compile(code, "README.md", "exec"), cell)  # an async test: the loop is running, as in Jupyter
    result = cell["result"]
    items = len(cell["items"])
    assert isinstance(result, cs.RunResult) and len(result.verdicts) == items == 8
    assert {verdict.rater_kind for verdict in result.verdicts} == {cs.RaterKind.PANEL}
    assert len(result.member_verdicts) == 2 * items and len(cell["table"]) == 3 * items
    assert len(cell["effort"].raters) == 3 and cell["effort"].values.shape == (3, items)
    rows = cs.agree(result.member_verdicts, level="ordinal")
    assert [row.criterion for row in rows] == ["effort"] and rows[0].n_raters == 2
    assert (tmp_path / "notebook.db").exists() and (tmp_path / "notebook.cache.db").exists()
    again: dict = {}
    exec(compile(code, "README.md", "exec"), again)  # running the cell again resumes
    assert again["result"].summary.model_calls == 0 and again["result"].verdicts == result.verdicts
