"""Every command documents itself with an example (STYLE rule 10), and the README shows them."""

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from convoscope.cli import cli
from convoscope.cli._app import _register

_register()


def all_commands(group=cli, prefix=()):
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        yield path, command
        if isinstance(command, click.Group):
            yield from all_commands(command, path)


COMMANDS = list(all_commands())


def test_the_expected_commands_exist():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"judge", "criteria", "criteria list", "criteria show", "agree", "metaeval"} <= names


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS], ids=" ".join)
def test_help_has_an_example(path):
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output, f"'convoscope {' '.join(path)} --help' shows no example"
    assert f"convoscope {' '.join(path)}" in result.output


def test_readme_mentions_every_top_level_command():
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    for name in cli.commands:
        assert f"convoscope {name}" in readme, f"README does not show 'convoscope {name}'"
