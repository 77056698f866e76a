"""``criteria show`` prints the prompt exactly as the judge is sent it (issue 35, observation 6).

Before: Rich wrapped the prompt at 80 columns when stdout was a file (at 40 with COLUMNS=40), so
``criteria show effort > p.txt`` held a text the judge never received.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from patience import PATIENT_S

from convoscope.cli._criteria import EXAMPLE_ITEM
from convoscope.criteria import get_criterion
from convoscope.items import Item
from convoscope.judges import build_request


def library_prompt(ref: str, mode: str) -> str:
    request = build_request(get_criterion(ref), Item.model_validate(EXAMPLE_ITEM), mode=mode)
    if request.prompt is not None:
        return request.prompt
    return "\n\n".join(f"[{message.role}]\n{message.content}" for message in request.messages or ())


def show_into_file(tmp_path, columns: str | None, *argv: str) -> str:
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    target = tmp_path / "p.txt"
    with target.open("wb") as out:  # stdout is a file, not a terminal
        subprocess.run([sys.executable, "-m", "convoscope", "criteria", "show", *argv], stdout=out,
                       env=env, check=True, timeout=PATIENT_S)
    return target.read_bytes().decode("utf-8")


@pytest.mark.parametrize("columns", [None, "40"])
@pytest.mark.parametrize(("ref", "mode"), [("effort", "chat"), ("dialogue-issues:overall", "completion")])
def test_the_prompt_only_file_is_the_prompt_byte_for_byte(tmp_path, columns, ref, mode):
    prompt = library_prompt(ref, mode)
    assert max(len(line) for line in prompt.splitlines()) > 80  # a wrapping printer would change it
    assert show_into_file(tmp_path, columns, ref, "--mode", mode, "--prompt-only") == prompt + "\n"


@pytest.mark.parametrize("columns", [None, "40"])
def test_the_full_view_ends_with_the_unwrapped_prompt(tmp_path, columns):
    prompt = library_prompt("effort", "chat")
    shown = show_into_file(tmp_path, columns, "effort")
    assert shown.endswith("\n" + prompt + "\n")
    assert "Question:" in shown.split(prompt)[0]  # the criterion is described before the prompt
