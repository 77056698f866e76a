"""Issue 12, observation 4: the CLI turned every ValueError (programming bugs included) into a
one-line user error. Only a ConvoscopeError (and a missing file) is the user's to fix: it prints
one line and exits 2; anything else is a bug and keeps its traceback."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner
from rich.console import Console

from convoscope.cli._common import fail_on
from convoscope.errors import ConfigError, ConvoscopeError, LocatedError


def command_raising(error: BaseException) -> click.Command:
    @click.command()
    def command() -> None:
        with fail_on(Console(stderr=True)):
            raise error

    return command


@pytest.mark.parametrize("error", [
    LocatedError("items.jsonl", "Field required", line=7, field="context.0.text"),
    ConfigError("at least one judge is needed"),
    ConvoscopeError("the endpoint refused the key"),
    FileNotFoundError("no such file: items.jsonl"),
])
def test_a_problem_the_user_can_fix_is_one_line_and_exit_2(error):
    result = CliRunner().invoke(command_raising(error), [])
    assert result.exit_code == 2 and result.exception is not None
    assert result.output.count("\n") == 1 and result.output.startswith("error: ")
    assert str(error) in result.output


def test_a_located_error_names_file_line_and_field():
    result = CliRunner().invoke(command_raising(
        LocatedError("items.jsonl", "Field required", line=7, field="context.0.text")), [])
    assert result.output == "error: items.jsonl, line 7, field 'context.0.text': Field required\n"


@pytest.mark.parametrize("bug", [ValueError("too many values to unpack"), KeyError("value"),
                                 TypeError("'NoneType' object is not subscriptable")])
def test_a_programming_error_keeps_its_traceback(bug):
    result = CliRunner().invoke(command_raising(bug), [])
    assert result.exit_code == 1 and result.exception is bug  # not swallowed into "error: ..."
    assert "error:" not in result.output


def test_click_errors_are_left_to_click():
    result = CliRunner().invoke(command_raising(click.BadParameter("not a number", param_hint="--n")), [])
    assert result.exit_code == 2 and "Invalid value for --n: not a number" in result.output
