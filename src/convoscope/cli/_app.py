"""The root command group. Each sub-command lives in its own module and registers here."""

from __future__ import annotations

import click

from convoscope import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="convoscope")
def cli() -> None:
    """Measure the quality of conversational responses.

    \b
    Example:
      convoscope judge examples/survey_items.jsonl --suite survey --out verdicts.jsonl
    """


def _register() -> None:
    # Imported here so that `import convoscope.cli` stays cheap and side-effect free.
    from convoscope.cli import _analysis, _criteria, _judge

    for module in (_judge, _criteria, _analysis):
        for command in module.COMMANDS:
            cli.add_command(command)


def main() -> None:
    _register()
    cli()
