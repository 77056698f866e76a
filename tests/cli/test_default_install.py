"""Every command of a default install (``pip install convoscope``, no extras) works, or says in one
line which extra to install — never a traceback.

The child process hides every library a default install would not have: what is installed here
but is not a core requirement of convoscope (nor a requirement of one), read from the installed
package's metadata. Before: ``agree`` crashed on pandas (then a dev-only package), ``view`` on
uvicorn, and ``campaign serve``'s hint printed ``pip install 'convoscope'`` (Rich ate ``[web]``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from patience import PATIENT_S

ROOT = Path(__file__).parents[2]


def _core_distributions() -> set[str]:
    """convoscope's core requirements and everything they require, by normalised name."""
    seen: set[str] = set()
    todo = ["convoscope"]
    while todo:
        name = todo.pop()
        try:
            requirements = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requirements:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue  # an extra's requirement, or one for another platform
            key = _normal(requirement.name)
            if key not in seen:
                seen.add(key)
                todo.append(requirement.name)
    return seen


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def hidden_modules() -> list[str]:
    core = _core_distributions() | {"convoscope", "pip", "setuptools", "wheel"}
    hidden = set()
    for module, distributions in metadata.packages_distributions().items():
        if not module.isidentifier() or module.startswith("_"):
            continue
        if not any(_normal(name) in core for name in distributions):
            hidden.add(module)
    return sorted(hidden)


BLOCKER = """
import importlib.abc, sys
HIDDEN = set({hidden!r})
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Hide())
sys.argv = ["convoscope", *{argv!r}]
from convoscope.cli import main
main()
"""


def run_default_install(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = BLOCKER.format(hidden=hidden_modules(), argv=list(argv))
    return subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=PATIENT_S)


def test_the_hidden_set_is_what_a_default_install_lacks():
    hidden = hidden_modules()
    assert {"llama_cpp", "pyarrow", "uvicorn", "starlette", "sklearn", "pytest"} <= set(hidden)
    assert not {"numpy", "scipy", "pydantic", "sqlalchemy", "httpx", "click", "rich"} & set(hidden)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("default-install")
    judged = [{"item_id": f"q{n}", "criterion": "overall", "rater": "model:j", "value": 1 + n % 5,
               "system": "ab"[n % 2]} for n in range(40)]
    people = [{"item_id": f"q{n}", "criterion": "overall", "rater": f"human:{who}",
               "value": 1 + (n + shift) % 5} for n in range(40) for who, shift in (("a", 0), ("b", 1))]
    (folder / "judge.jsonl").write_text("".join(json.dumps(row) + "\n" for row in judged))
    (folder / "people.jsonl").write_text("".join(json.dumps(row) + "\n" for row in people))
    (folder / "annotations.csv").write_text("id,annotator,label\n" + "".join(
        f"{row['item_id']},{row['rater'][6:]},{row['value']}\n" for row in people))
    # A store for `view`, whatever ran before (the `judge` case above it may leave none).
    from convoscope.judges import Verdict
    from convoscope.store import Store

    store = Store(folder / "view.db")
    store.add("r", "k", Verdict(item_id="q0", criterion="overall", rater="model:j", value=1))
    store.close()
    # The folder `campaign serve` is given exists whatever ran before (tests never depend on order).
    subprocess.run([sys.executable, "-m", "convoscope", "campaign", "init", str(folder / "served")],
                   check=True, capture_output=True, timeout=PATIENT_S)
    return folder


def commands(folder: Path) -> list[list[str]]:
    examples = ROOT / "examples"
    return [
        ["criteria", "list"], ["criteria", "show", "effort"], ["datasets", "list"],
        ["agree", str(folder / "annotations.csv"), "--item-col", "id", "--rater-col", "annotator",
         "--value-col", "label", "--level", "ordinal"],
        ["metaeval", str(folder / "judge.jsonl"), "--human", str(folder / "people.jsonl")],
        ["report", str(folder / "judge.jsonl"), "--out", str(folder / "report.html")],
        ["route", str(folder / "judge.jsonl"), "--random", "5", "--out", str(folder / "route.jsonl")],
        ["judge", str(examples / "survey_items.jsonl"), "--criterion", "survey/effort", "--limit", "1",
         "--store", str(folder / "run.db")],
        ["view", str(folder / "view.db")],
        ["gibberish", str(examples / "survey_answers.csv"), "--column", "answer"],
        ["survey", "score", str(examples / "survey_answers.csv"), "--question-col", "question",
         "--answer-col", "answer", "--out", str(folder / "scored.csv"), "--store", str(folder / "s.db")],
        ["synth", "contexts", "--n", "1", "--languages", "en", "--out", str(folder / "contexts.jsonl")],
        ["campaign", "init", str(folder / "study")],
        ["campaign", "serve", str(folder / "served")],
    ]


# What a default install is for: these must work without any extra (before: agree on a CSV file
# asked for the parquet extra, its fast reader being pyarrow's).
MUST_WORK = {"criteria", "datasets", "agree", "metaeval", "report", "route", "gibberish", "campaign init"}
EXTRA_HINT = re.compile(r"needs the '(\w+)' extra .*: pip install 'convoscope\[\1\]'")


@pytest.mark.parametrize("index", range(14))
def test_a_command_works_or_names_its_extra_in_one_line(files, index):
    argv = commands(files)[index]
    done = run_default_install(*argv, cwd=files)
    said = done.stdout + done.stderr
    assert "Traceback" not in said, said[-3000:]
    if argv[0] in MUST_WORK or " ".join(argv[:2]) in MUST_WORK:
        assert done.returncode == 0, said[-3000:]
    if done.returncode == 0:
        return
    assert done.returncode == 2, said[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and EXTRA_HINT.search(errors[0]), said[-3000:]
