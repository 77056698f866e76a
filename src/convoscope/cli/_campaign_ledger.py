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
