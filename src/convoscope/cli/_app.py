"""The root command group. Each sub-command lives in its own module and registers here."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from convoscope import __version__


class _Commands(click.Group):
    """The root group. A command's module is imported only when that command runs (``judge``
    never imports the web app or the statistics), and an optional library that is not installed
    becomes one line naming the extra that installs it (exit 2), never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        _register()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            _register_one(cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        from convoscope.errors import missing_extra

        try:
            return super().invoke(ctx)
        except ImportError as error:
            hint = missing_extra(error, f"convoscope {ctx.invoked_subcommand or ''}".strip())
            if hint is None:
                raise
            click.echo(f"error: {hint}", err=True)
            ctx.exit(2)


@click.group(cls=_Commands,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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
        with _collection_paused():
            module = importlib.import_module(f"convoscope.cli.{info.name}")
        for command in getattr(module, "COMMANDS", ()):
            cli.add_command(command)
    _registered = True


def _register_one(name: str) -> None:
    """Add the commands of the module named like ``name`` (``judge`` -> ``_judge``); a command
    that lives in a module of another name is found by registering them all."""
    import importlib

    try:
        with _collection_paused():
            module = importlib.import_module(f"convoscope.cli._{name.replace('-', '_')}")
    except ModuleNotFoundError as error:
        if error.name != f"convoscope.cli._{name.replace('-', '_')}":
            raise
        _register()
        return
    for command in getattr(module, "COMMANDS", ()):
        cli.add_command(command)
    if name not in cli.commands:
        _register()


@contextmanager
def _collection_paused() -> Iterator[None]:
    """No garbage collection while a command's modules are imported: importing builds hundreds of
    thousands of long-lived objects and next to no garbage, and the collections the allocations
    would trigger cost about a tenth of the start-up's CPU (issue 39). In the program (``main``),
    what was imported is then frozen (``gc.freeze``): collections, which resume after, no longer
    walk the modules' objects. Inside another program (tests, notebooks) nothing is frozen."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _in_main:
            gc.freeze()
        if enabled:
            gc.enable()


_in_main = False  # set by main(): this process is the convoscope program


def main() -> None:
    global _in_main
    _in_main = True
    cli()
