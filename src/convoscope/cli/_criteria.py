"""``convoscope criteria``: list the built-in suites, show a criterion as the judge sees it,
validate a criteria file."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from convoscope.cli._common import fail_on
from convoscope.criteria import (
    Criterion,
    describe_scale,
    get_criterion,
    list_suites,
    load_criteria,
    load_suite,
)


@click.group("criteria")
def criteria_group() -> None:
    """Built-in suites and your own criteria.

    \b
    Example:
      convoscope criteria list
      convoscope criteria show survey:effort
    """


@criteria_group.command("list")
@click.option("--file", "files", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Also list the criteria in this YAML file. Repeatable.")
def list_command(files: tuple[str, ...]) -> None:
    """Every built-in suite and its criteria, with scale and granularity.

    \b
    Example:
      convoscope criteria list
      convoscope criteria list --file my-kpis.yaml
    """
    console = Console()
    with fail_on(console):
        table = Table("suite", "criterion", "answer", "judged on", "how")
        groups = [(suite, list(load_suite(suite).criteria)) for suite in list_suites()]
        groups += [(Path(path).name, load_criteria(path)) for path in files]
        for suite, criteria in groups:
            for criterion in criteria:
                table.add_row(suite, criterion.name, describe_scale(criterion), criterion.granularity,
                              criterion.evaluation)
        console.print(table)
        console.print("Refer to a criterion as [bold]suite:name[/bold] (e.g. survey:effort) "
                      "when the name is in several suites.")


@criteria_group.command("show")
@click.argument("ref", metavar="CRITERION")
@click.option("--file", "files", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Look in this YAML file too. Repeatable.")
@click.option("--mode", type=click.Choice(["chat", "completion"]), default="chat", show_default=True,
              help="Show the prompt of this judge mode.")
@click.option("--persona", help="Render the prompt with this persona, as 'convoscope judge "
              "--persona' gives it: a library name (security-expert, brand-ambassador, ...) or NAME=TEXT.")
@click.option("--domain", help="Render the prompt with this setting, as 'convoscope judge --domain' "
              "gives it (replaces the suite's default).")
@click.option("--prompt-only", is_flag=True, help="Print only the prompt, byte for byte (e.g. to a file).")
def show_command(ref: str, files: tuple[str, ...], mode: str, persona: str | None,
                 domain: str | None, prompt_only: bool) -> None:
    """A criterion's scale, levels, examples and options, and the prompt as the judge receives it
    (with a persona and a domain when given).

    \b
    Example:
      convoscope criteria show effort
      convoscope criteria show dialogue-issues:overall --mode completion
      convoscope criteria show kpi:harmful-system-output --persona security-expert --domain "a delivery van"
      convoscope criteria show effort --prompt-only > prompt.txt
    """
    from convoscope.judges import resolve_persona

    console = Console()
    with fail_on(console):
        criterion = get_criterion(ref, extra_paths=files)
        if domain:
            criterion = criterion.model_copy(update={"domain": domain})
        name, text = resolve_persona(persona) if persona else (None, None)
        prompt = example_prompt(criterion, mode, text)
        if not prompt_only:
            _print_criterion(console, criterion)
            shown = f"{mode} mode" + (f", persona {name}" if name else "")
            console.rule(f"prompt ({shown}) for an example item")
            console.file.flush()
        # Not through Rich: it wraps at the terminal's width (80 columns in a pipe) and would
        # change the text a reader copies from the text the judge is sent.
        click.echo(prompt)


def _print_criterion(console: Console, criterion: Criterion) -> None:
    console.print(f"[bold]{criterion.suite or ''}:{criterion.name}[/bold]  ({criterion.granularity}, "
                  f"{'higher is better' if criterion.higher_is_better else 'higher is worse'})")
    console.print(f"Question: {criterion.question}\nDefinition: {criterion.definition.strip()}")
    console.print(f"Answer: {describe_scale(criterion)}")
    if criterion.levels:
        table = Table("value", "name", "definition", "examples", show_lines=True)
        for level in criterion.levels:
            table.add_row(criterion.answer_word(level.value), level.name or "", level.definition,
                          "\n".join(level.examples))
        console.print(table)
    for option in criterion.options:
        when = ", ".join(criterion.answer_word(value) for value in option.when) or "any answer"
        console.print(f"option [bold]{option.name}[/bold] (after {when}): {option.description}")


EXAMPLE_ITEM = {"id": "example", "question": "What did you think of the service?",
                "context": [{"speaker": "user", "text": "Can you recommend a quiet café nearby?"}],
                "response": "The one on Elm Street is calm in the mornings and has good tea."}


def example_prompt(criterion: Criterion, mode: str, persona: str | None = None) -> str:
    """The prompt the judge receives for :data:`EXAMPLE_ITEM` (chat: each message under its role)."""
    from convoscope.items import Item
    from convoscope.judges import build_request

    request = build_request(criterion, Item.model_validate(EXAMPLE_ITEM), mode=mode, persona=persona)
    if request.prompt is not None:
        return request.prompt
    return "\n\n".join(f"[{message.role}]\n{message.content}" for message in request.messages or ())


@criteria_group.command("validate")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
def validate_command(path: Path) -> None:
    """Check a criteria YAML file; errors name the line and field.

    \b
    Example:
      convoscope criteria validate my-kpis.yaml
    """
    console = Console()
    with fail_on(console):
        criteria = load_criteria(path)
        console.print(f"{path}: {len(criteria)} criteria, all valid: "
                      + ", ".join(criterion.name for criterion in criteria))


COMMANDS = [criteria_group]
