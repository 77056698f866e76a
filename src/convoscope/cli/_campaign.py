"""``convoscope campaign``: set up, serve and watch a human-evaluation campaign."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from convoscope.cli._campaign_views import (
    ADDRESS_FILE,
    DEFAULT_BASE,
    people_table,
    record_address,
    recorded_address,
    terminal_table,
)
from convoscope.cli._common import fail_on


@click.group("campaign")
def campaign_group() -> None:
    """Human-evaluation campaigns: people judge candidates through a web app.

    \b
    Example:
      convoscope campaign init my-study/
      convoscope campaign invite my-study/ --n 12
      convoscope campaign serve my-study/ --items benchmark.jsonl --db study.db
      convoscope campaign status my-study/
      convoscope campaign report my-study/ --out report.html
    """


@campaign_group.command("init")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--name", help="Campaign name (default: the folder name).")
def init_command(directory: str, name: str | None) -> None:
    """Write a campaign.yaml and guidelines.md to edit, from the template.

    \b
    Example:
      convoscope campaign init my-study/
    """
    from convoscope.campaigns import init_campaign

    console = Console()
    with fail_on(console):
        for path in init_campaign(directory, name=name):
            console.print(f"wrote {path}")


@campaign_group.command("serve")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--items", type=click.Path(exists=True, dir_okay=False),
              help="Items to judge; written into campaign.yaml (items:) so later commands find them.")
@click.option("--db", help="Store path or postgresql:// URL; written into campaign.yaml (store:) so later "
              "commands find it (default: 'store:' in campaign.yaml).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Keep 127.0.0.1 behind a TLS reverse proxy (see docs/campaigns.md); "
                   "0.0.0.0 listens on every interface, without TLS.")
@click.option("--port", default=8080, show_default=True, type=int)
@click.option("--public-url", default=None,
              help="The address annotators use (e.g. https://study.example.org), "
              "for the links printed here.")
@click.option("--max-per-client", default=64, show_default=True, type=click.IntRange(min=0),
              help="Connections one client address may hold (0: no limit). Behind a reverse proxy every "
                   "connection comes from the proxy: raise it, and limit clients in the proxy.")
@click.option("--rate", default=10.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Requests per second one private link may make (bursts of three times as many).")
def serve_command(directory: str, items: str | None, db: str | None, host: str, port: int,
                  public_url: str | None, max_per_client: int, rate: float) -> None:
    """Run the annotation web app (uvicorn); annotators open their private links.

    \b
    Example:
      convoscope campaign serve my-study/ --items benchmark.jsonl --db study.db
      convoscope campaign serve my-study/ --port 8080 --public-url https://study.example.org
    """
    from convoscope.campaigns import open_campaign, remember_locations

    # Without the web extra, the import fails and the command line names the extra in one line.
    from convoscope.web import build_server, dashboard_secret, join_secret

    console = Console()
    with fail_on(console):
        for line in remember_locations(directory, items=items, store=db):
            console.print(f"campaign.yaml now names {line}", soft_wrap=True, markup=False)
        campaign = open_campaign(directory)
        server = build_server(campaign, host=host, port=port, max_per_client=max_per_client, rate=rate,
                              burst=int(3 * rate))
        base = (public_url or f"http://{host}:{server.server_port}").rstrip("/")
        record_address(directory, base)  # `campaign invite` prints links to this address
        console.print(f"annotators: {base}/a/<token>  (links from `campaign invite`)", soft_wrap=True)
        _print_study_link(console, campaign, base, join_secret)
        console.print(f"researcher dashboard (keep it private): {base}/r/{dashboard_secret(directory)}",
                      soft_wrap=True)
        console.print(f"answers are stored in {campaign.store.location}; Ctrl-C to stop, every answer is "
                      "already stored.", soft_wrap=True, markup=False)
        try:
            server.serve_forever()
        finally:
            server.server_close()


def _print_study_link(console: Console, campaign: Any, base: str, join_secret: Any) -> None:
    kind = campaign.spec.platform.kind
    if kind == "none":
        return
    names = {"prolific": "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
                         "&SESSION_ID={{%SESSION_ID%}}", "mturk": "(MTurk adds its own parameters)"}
    console.print(f"{kind} study link: {base}/join/{join_secret(campaign.directory)}?{names[kind]}",
                  soft_wrap=True, markup=False)
    if not campaign.references_ready():
        console.print("the study link turns people away (a return request, before any work) until the "
                      "reference annotators have answered the whole qualification batch: "
                      + ", ".join(campaign.spec.qualification.reference_annotators), soft_wrap=True,
                      markup=False, style="yellow")


@campaign_group.command("invite")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--n", "count", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--base-url", default=None,
              help=f"The address in the printed links (default: the one `campaign serve` last used for this "
                   f"campaign, noted in {ADDRESS_FILE}; else {DEFAULT_BASE}).")
def invite_command(directory: str, count: int, base_url: str | None) -> None:
    """Create annotators with one private link each (kept in annotators.json).

    A platform's participant id may be added to a link (?PROLIFIC_PID=...); it is kept in
    annotators.json only, never in verdicts, exports or reports. The links use the address
    `campaign serve` prints (its --port or --public-url), so invite after serving once, or pass
    --base-url.

    \b
    Example:
      convoscope campaign invite my-study/ --n 12
    """
    from convoscope.campaigns import invite, load_campaign

    console = Console()
    with fail_on(console):
        load_campaign(directory)  # a broken campaign.yaml is reported before anyone is invited
        base = (base_url or recorded_address(directory) or DEFAULT_BASE).rstrip("/")
        for annotator in invite(directory, count):
            console.print(f"{annotator.id}\t{base}/a/{annotator.token}", soft_wrap=True, markup=False)


_ITEMS = click.option("--items", type=click.Path(exists=True, dir_okay=False),
                      help="Items to judge (default: 'items:' in campaign.yaml, found from any directory).")
_DB = click.option("--db", help="Store path or postgresql:// URL (default: 'store:' in campaign.yaml, found "
                   "from any directory; never created here).")
_SIDE = click.option("--exclude-side-biased", is_flag=True, default=None,
                     help="Pairwise: leave out people whose choice of the response shown first departs from "
                          "one half (Holm-adjusted binomial p < 0.05); default: exclude_side_biased in "
                          "campaign.yaml.")


@campaign_group.command("status")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@_ITEMS
@_DB
def status_command(directory: str, items: str | None, db: str | None) -> None:
    """Progress, agreement, time per batch, flagged annotators, and where each person stands.

    \b
    Example:
      convoscope campaign status my-study/
    """
    from convoscope.campaigns import open_campaign

    console = Console()
    with fail_on(console):
        status = open_campaign(directory, items=items, store=db, create=False).status()
        console.print(f"{status.invited} invited, {status.qualified_text}, "
                      f"{status.answers} answers that count")
        table = terminal_table("batch", "people", "answers", "Fleiss", "Cohen", "strong", "min", "late",
                               "flagged", caption="people: finished/started/wanted; kappas: Fleiss, mean "
                               "pairwise Cohen, strong judgements only; min: median minutes; late: over the "
                               "time limit")
        notes = []
        for row in status.batches:
            a = row.agreement
            table.add_row(row.batch, f"{row.finished}/{row.started}/{row.wanted or '—'}", str(row.answers),
                          _fmt(a.fleiss_kappa if a else None), _fmt(a.mean_cohen_kappa if a else None),
                          _fmt(a.strong_kappa if a else None), _fmt(row.median_minutes, 1),
                          ", ".join(row.over_time), ", ".join(row.flagged))
            if a is not None and a.note:
                notes.append(f"{row.batch}: {a.note}")
        console.print(table)
        # Notes say why a statistic is missing; as a column they squeeze the table unreadable.
        for note in notes:
            console.print(f"  {escape(note)}", style="dim", soft_wrap=True)
        console.print()
        console.print(people_table(status))
        if status.selection:
            chosen = terminal_table("chosen because", "items", "answered",
                                    caption=f"{status.chosen_items} items routed from a judged run; 'random' "
                                    "is the uniform random sample")
            for reason in status.selection:
                chosen.add_row(escape(reason.reason), str(reason.items), str(reason.answered))
            console.print(chosen)



@campaign_group.command("report")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--all-answers", is_flag=True, help="Also count answers of people not invited, blocked or "
              "not qualified (left out by default).")
@_SIDE
@_ITEMS
@_DB
def report_command(directory: str, out: str, all_answers: bool, exclude_side_biased: bool | None,
                   items: str | None, db: str | None) -> None:
    """Write the HTML report: the protocol's reporting checklist, results and agreement.

    The file is readable by its owner only (it quotes annotators' notes), like the store.

    \b
    Example:
      convoscope campaign report my-study/ --out report.html
    """
    from convoscope.campaigns import open_campaign, write_campaign_report

    console = Console()
    with fail_on(console):
        campaign = open_campaign(directory, items=items, store=db, create=False)
        path = write_campaign_report(campaign, out, everything=all_answers,
                                     exclude_side_biased=exclude_side_biased)
        console.print(f"wrote {path}", soft_wrap=True, markup=False)


@campaign_group.command("export")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="A .jsonl or .csv file.")
@click.option("--qualification", is_flag=True, help="Include the qualification batch's answers.")
@click.option("--all-answers", is_flag=True, help="Also export answers of people not invited, blocked or "
              "not qualified (left out by default).")
@click.option("--questionnaires", "questionnaires", type=click.Path(dir_okay=False),
              help="Also write every questionnaire answer (before / after the task) to this .jsonl or .csv.")
@click.option("--decisions", "decisions", type=click.Path(dir_okay=False),
              help="Also write every qualification decision (kappa with each reference, accuracy against "
              "their majority, their own agreement) to this .jsonl or .csv.")
@_SIDE
@_ITEMS
@_DB
def export_command(directory: str, out: str, qualification: bool, all_answers: bool,
                   questionnaires: str | None, decisions: str | None, exclude_side_biased: bool | None,
                   items: str | None, db: str | None) -> None:
    """Write the human verdicts as JSONL or CSV, ready for `convoscope metaeval --human`.

    Files are readable by their owner only, like the store.

    \b
    Example:
      convoscope campaign export my-study/ --out human.jsonl
      convoscope campaign export my-study/ --out human.csv --questionnaires people.csv
      convoscope campaign export my-study/ --out human.csv --decisions qualification.csv
      convoscope metaeval verdicts.jsonl --human human.jsonl
    """
    from convoscope.campaigns import export_decisions, export_questionnaires, export_verdicts, open_campaign

    console = Console()
    with fail_on(console):
        campaign = open_campaign(directory, items=items, store=db, create=False)
        count = export_verdicts(campaign, out, qualification=qualification, everything=all_answers,
                                exclude_side_biased=exclude_side_biased)
        console.print(f"wrote {count} verdicts to {out}", soft_wrap=True, markup=False)
        if questionnaires:
            rows = export_questionnaires(campaign, questionnaires)
            console.print(f"wrote {rows} questionnaire answers to {questionnaires}", soft_wrap=True,
                          markup=False)
        if decisions:
            made = export_decisions(campaign, decisions)
            console.print(f"wrote {made} qualification decisions to {decisions}", soft_wrap=True,
                          markup=False)


@campaign_group.command("import")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.argument("verdicts", type=click.Path(dir_okay=False))
@_ITEMS
@_DB
def import_command(directory: str, verdicts: str, items: str | None, db: str | None) -> None:
    """Add human verdicts collected elsewhere (JSONL or CSV, as `export` writes them).

    Every row is checked like an answer in the web app before anything is stored; rows already
    stored are skipped.

    \b
    Example:
      convoscope campaign import my-study/ paper-forms.csv
    """
    from convoscope.campaigns import import_verdicts, open_campaign

    console = Console()
    with fail_on(console):
        summary = import_verdicts(open_campaign(directory, items=items, store=db), verdicts)
        console.print(f"{summary.rows} rows checked: {summary.added} added, "
                      f"{summary.already_stored} already stored")


@campaign_group.command("add-items", epilog="""
\b
Examples:
  convoscope campaign add-items study/ --from-run judge.jsonl --items items.jsonl --random 100
  convoscope campaign add-items study/ --from-run judge.jsonl --items items.jsonl --random 50 --value hold
  convoscope route judge.jsonl --random 100 --items items.jsonl --out r.jsonl --write-items chosen.jsonl
  convoscope campaign add-items study/ --chosen chosen.jsonl
""")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--from-run", "verdict_paths", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A judged run's verdicts (convoscope judge --out). Repeatable.")
@click.option("--items", "items_path", type=click.Path(exists=True, dir_okay=False),
              help="The judged items the verdicts are about.")
@click.option("--random", "random_size", type=click.IntRange(min=0),
              help="Size of the uniform random sample of the run's items (required with --from-run).")
@click.option("--value", "values", multiple=True, help="Also choose items with a verdict of this value "
              "(e.g. hold). Repeatable.")
@click.option("--flat-above", type=click.FloatRange(0, 1), default=0.8, show_default=True,
              help="Also choose items where a judge's score distribution is flatter than this.")
@click.option("--no-disagreement", is_flag=True, help="Do not choose items where judges disagree.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--chosen", "chosen_path", type=click.Path(exists=True, dir_okay=False),
              help="Items already chosen (convoscope route --write-items) instead of --from-run.")
def add_items_command(directory: str, verdict_paths: tuple[str, ...], items_path: str | None,
                      random_size: int | None, values: tuple[str, ...], flat_above: float,
                      no_disagreement: bool, seed: int, chosen_path: str | None) -> None:
    """Add items people should judge to the campaign in DIRECTORY, each with why it was chosen.

    From a judged run: items where judges disagree, a judge's distribution is flat or a verdict
    has a chosen value (a survey hold), always with a uniform random sample of --random items
    (what lets `convoscope estimate` correct the judge without bias). The reasons go into each
    item's meta (selected_because, random_sample); items are appended to the campaign's items
    file, never reordered, so a running study keeps its batches.
    """
    from convoscope.campaigns import add_items
    from convoscope.estimate import select_items, selected_items
    from convoscope.items import read_items
    from convoscope.judges import read_verdicts

    console = Console(stderr=True)
    with fail_on(console):
        if chosen_path:
            if verdict_paths:
                raise click.UsageError("give --chosen or --from-run, not both")
            chosen = read_items(chosen_path)
        else:
            if not verdict_paths or items_path is None or random_size is None:
                raise click.UsageError("--from-run needs --items and --random (or give --chosen)")
            verdicts = [v for path in verdict_paths for v in read_verdicts(path)]
            selection = select_items(verdicts, random=random_size, disagreement=not no_disagreement,
                                     flat_above=flat_above, values=values, seed=seed)
            chosen = selected_items(read_items(items_path), selection)
        result = add_items(directory, chosen)
        console.print(f"Added {result.added} items to {result.path} ({result.random_sample} in the random "
                      f"sample); {result.already_there} were there already.")


@campaign_group.command("block")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.argument("annotator")
@click.option("--reason", default="blocked by the researcher", show_default=True)
@click.option("--unblock", is_flag=True, help="Lift an earlier block instead.")
@_ITEMS
@_DB
def block_command(directory: str, annotator: str, reason: str, unblock: bool, items: str | None,
                  db: str | None) -> None:
    """Block an annotator: their link stops taking answers and their answers leave agreement, votes
    and exports (they stay in the store; --unblock brings them back).

    \b
    Example:
      convoscope campaign block my-study/ a007 --reason "copied the same note everywhere"
    """
    from convoscope.campaigns import open_campaign

    console = Console()
    with fail_on(console):
        campaign = open_campaign(directory, items=items, store=db, create=False)
        campaign.block(annotator, reason, unblock=unblock)
        console.print(f"{'unblocked' if unblock else 'blocked'} {annotator}")


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


COMMANDS: list[click.Command] = [campaign_group]


from convoscope.cli import _campaign_ledger  # noqa: E402,F401  (registers `campaign ledger`)
