"""The root command group. Each sub-command lives in its own module and registers here."""

from __future__ import annotations

import click

from convoscope import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="convoscope")
def cli() -> None:
    """Measure the quality of conversational responses.

    \b
    Examples:
      convoscope survey score examples/survey_answers.csv --question-col question --answer-col answer
      convoscope judge examples/dialogues.jsonl --suite dialogue-issues --out verdicts.jsonl
      convoscope report verdicts.jsonl --out report.html
      convoscope metaeval verdicts.jsonl --human human.jsonl
    """


_registered = False


def _register() -> None:
    """Add every command module's COMMANDS. A module `convoscope.cli._<name>` that defines a
    COMMANDS list is a command module; discovery keeps this file out of every feature's diff."""
    global _registered
    if _registered:
        return
    import importlib
    import pkgutil

    import convoscope.cli as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name):
        if not info.name.startswith("_") or info.name in {"_app", "_common"}:
            continue
        module = importlib.import_module(f"convoscope.cli.{info.name}")
        for command in getattr(module, "COMMANDS", ()):
            cli.add_command(command)
    _registered = True


def main() -> None:
    _register()
    cli()
