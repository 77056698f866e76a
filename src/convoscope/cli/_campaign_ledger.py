"""``convoscope campaign ledger``: who to approve, review or pay a bonus, from the campaign's own
records (registered on the ``campaign`` group when it is imported)."""

from __future__ import annotations

import click
from rich.console import Console

from convoscope.cli._campaign import _DB, _ITEMS, campaign_group
from convoscope.cli._common import fail_on


@campaign_group.command("ledger")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="The ledger: a .csv or .json file.")
@click.option("--approve", "approve", type=click.Path(dir_okay=False),
              help="Also write the Prolific ids to approve, one per line (Prolific's bulk approve).")
@click.option("--bonus", "bonus", type=click.Path(dir_okay=False),
              help="Also write 'participant_id,amount' lines for Prolific's bulk bonus.")
@_ITEMS
@_DB
def ledger_command(directory: str, out: str, approve: str | None, bonus: str | None, items: str | None,
                   db: str | None) -> None:
    """One row per person: platform id, outcome, code shown, tasks, gold checks, minutes, the
    qualification's kappa and accuracy, and the recommended action (approve / review / bonus).

    The files hold platform ids: they are readable by their owner only.

    \b
    Example:
      convoscope campaign ledger my-study/ --out ledger.csv --approve approve.txt --bonus bonus.csv
    """
    from pathlib import Path

    from convoscope.campaigns import (
        ledger_rows,
        open_campaign,
        prolific_approve_ids,
        prolific_bonus_lines,
        write_ledger,
    )
    from convoscope.campaigns._secure import private_file

    console = Console()
    with fail_on(console):
        rows = ledger_rows(open_campaign(directory, items=items, store=db, create=False))
        write_ledger(rows, out)
        console.print(f"wrote {len(rows)} people to {out}", soft_wrap=True, markup=False)
        for path, text, what in ((approve, prolific_approve_ids(rows), "ids to approve"),
                                 (bonus, prolific_bonus_lines(rows), "bonus lines")):
            if path:
                with private_file(Path(path)) as handle:
                    handle.write(text)
                console.print(f"wrote {text.count(chr(10))} {what} to {path}", soft_wrap=True, markup=False)


@campaign_group.command("prolific")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--study", required=True, help="The Prolific study id.")
@click.option("--sync", is_flag=True,
              help="Read the submissions: a returned or timed-out one frees the place.")
@click.option("--approve", is_flag=True, help="Approve everyone the ledger says to approve.")
@click.option("--pay-bonuses", is_flag=True, help="Pay the ledger's recommended bonuses (once per ledger: "
                                                  "Prolific pays again if asked again).")
@click.option("--pause", "transition", flag_value="PAUSE", help="Pause the study.")
@click.option("--resume", "transition", flag_value="START", help="Resume the study.")
@click.option("--api-url", default="https://api.prolific.com", show_default=True, help="Prolific's API.")
@_ITEMS
@_DB
def prolific_command(directory: str, study: str, sync: bool, approve: bool, pay_bonuses: bool,
                     transition: str | None, api_url: str, items: str | None, db: str | None) -> None:
    """Prolific's API, optional (the token in PROLIFIC_TOKEN): read submissions, approve and pay
    bonuses from the ledger, pause or resume the study. Nothing is sent without a flag.

    \b
    Example:
      PROLIFIC_TOKEN=... convoscope campaign prolific my-study/ --study 64ab... --sync
    """
    import os

    from convoscope.campaigns import ledger_rows, open_campaign
    from convoscope.campaigns._prolific import Prolific, settle, sync_submissions

    console = Console()
    with fail_on(console):
        campaign = open_campaign(directory, items=items, store=db, create=False)
        client = Prolific(os.environ.get("PROLIFIC_TOKEN", ""), base_url=api_url)
        if sync:
            freed = sync_submissions(campaign, client, study)
            console.print(f"{len(freed)} returned or timed-out submissions: places freed "
                          f"({', '.join(freed) or 'none'})", soft_wrap=True, markup=False)
        if approve or pay_bonuses:
            approved, bonus = settle(client, study, ledger_rows(campaign), approve=approve,
                                     bonuses=pay_bonuses)
            console.print(f"approved {approved}; bonus payment {bonus or 'none'}", soft_wrap=True,
                          markup=False)
        if transition:
            client.transition(study, transition)  # type: ignore[arg-type]
            console.print("study paused" if transition == "PAUSE" else "study resumed", markup=False)


WAYS_OUT = {"returned": "RETURNED", "timed-out": "TIMED-OUT", "rejected": "REJECTED", "withdrew": "WITHDRAWN"}


@campaign_group.command("withdraw")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.argument("annotator")
@click.option("--why", type=click.Choice(list(WAYS_OUT)), default="returned", show_default=True,
              help="How the person left: returned or timed out on the platform, rejected, or withdrew "
                   "their consent.")
@click.option("--undo", is_flag=True, help="Recorded by mistake: their answers count again.")
@_ITEMS
@_DB
def withdraw_command(directory: str, annotator: str, why: str, undo: bool, items: str | None,
                     db: str | None) -> None:
    """Record that a person left part-way (what `prolific --sync` records from Prolific's API): their
    place goes to someone else and their answers leave agreement, votes, results, exports and the
    report. The answers stay in the store and the ledger (the work is paid); `export --all-answers`
    and `report --all-answers` include them.

    \b
    Example:
      convoscope campaign withdraw my-study/ p004 --why timed-out
    """
    from convoscope.campaigns import open_campaign

    console = Console()
    with fail_on(console):
        campaign = open_campaign(directory, items=items, store=db, create=False)
        if undo:
            campaign.mark_rejoined(annotator)
            console.print(f"{annotator}'s answers count again")
        else:
            campaign.mark_returned(annotator, WAYS_OUT[why], by_hand=True)
            console.print(f"{annotator} left ({why}): answers kept, no longer counted")
