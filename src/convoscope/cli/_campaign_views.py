"""What `campaign status` and `campaign invite` print: tables for an 80-column terminal, and the
address `serve` uses (so `invite` prints links that reach it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from convoscope.campaigns import CampaignStatus

ADDRESS_FILE = "server-address.txt"  # where `serve` notes the address its links use
DEFAULT_BASE = "http://127.0.0.1:8080"


def record_address(directory: str, base: str) -> None:
    """Note the address `serve` prints its links with, in the campaign folder."""
    (Path(directory) / ADDRESS_FILE).write_text(base + "\n", encoding="utf-8")


def recorded_address(directory: str) -> str | None:
    """The address `serve` last used for this campaign, or None before the first `serve`."""
    path = Path(directory) / ADDRESS_FILE
    return path.read_text(encoding="utf-8").strip() or None if path.is_file() else None


def terminal_table(*headers: str, caption: str) -> Table:
    """A table for an 80-column terminal: no borders (the header is bold), the first column kept
    whole, and a cell too narrow for its text wraps onto more lines of its row instead of being
    cut with '…' (headers too)."""
    table = Table(*headers, caption=caption, box=None, pad_edge=False, caption_justify="left")
    for column in table.columns:
        column.overflow = "fold"
    table.columns[0].no_wrap = True
    return table


def people_table(status: CampaignStatus) -> Table:
    """One row per person: answers, batches, minutes, the qualification decision and whether they
    are active or left, and why."""
    table = terminal_table("person", "answers", "counted", "batches", "min", "qualified", "standing",
                           caption=f"{status.invited} invited, {status.left} left; counted: answers that "
                           "enter agreement, votes and exports; batches: main batches finished; min: "
                           "minutes on task")
    for person in status.annotators:
        table.add_row(escape(person.annotator), str(person.answers), str(person.counted),
                      str(person.batches_finished), f"{person.minutes:.1f}",
                      person.qualified_text(status.qualification_enabled), escape(person.standing))
    return table
