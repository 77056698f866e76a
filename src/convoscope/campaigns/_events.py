"""The campaign's own facts next to its verdicts: qualification decisions, blocks, consent, changed
answers. One append-only table in the same database as the verdicts (SQLite or PostgreSQL).

Nothing here is ever updated or deleted: a decision is written once (a second write for the same
annotator is ignored, so it can never change); a block is lifted by a later ``unblock`` row; a
changed answer is a ``revision`` row while the first answer stays in the verdicts table.
"""

from __future__ import annotations

import json
import time
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict

from convoscope.store import Store
from convoscope.store._schema import insert_for

_metadata = sa.MetaData()
events_table = sa.Table(
    "campaign_events", _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), nullable=False, index=True),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("annotator", sa.String(64), nullable=False),
    sa.Column("key", sa.String(128), nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.UniqueConstraint("run_id", "kind", "annotator", "key", name="uq_campaign_event"),
)


class Event(BaseModel):
    """One stored fact about an annotator."""

    model_config = ConfigDict(frozen=True)

    id: int
    kind: str
    annotator: str
    key: str
    data: dict[str, Any]
    created_at: float


class EventLog:
    """The events of one campaign run."""

    def __init__(self, store: Store, run_id: str):
        self.engine = store.engine
        self.run_id = run_id
        _metadata.create_all(self.engine, tables=[events_table])  # checkfirst: a no-op when present

    def add(self, kind: str, annotator: str, key: str, data: dict[str, Any]) -> bool:
        """Write an event once; False when one with the same kind, annotator and key exists."""
        row = {"run_id": self.run_id, "kind": kind, "annotator": annotator, "key": key,
               "data": json.dumps(data, ensure_ascii=False), "created_at": time.time()}
        statement = insert_for(self.engine, events_table).values(**row).on_conflict_do_nothing(
            index_elements=["run_id", "kind", "annotator", "key"])
        with self.engine.begin() as connection:
            result = connection.execute(statement.returning(events_table.c.id))
            return result.first() is not None

    def all(self, *kinds: str, annotator: str | None = None, after: int = 0) -> list[Event]:
        """Events in the order written, of the given kinds (every kind when none is given), with an
        id above ``after`` (events are only appended: a reader can ask for what is new)."""
        query = (sa.select(events_table).where(events_table.c.run_id == self.run_id)
                 .where(events_table.c.id > after).order_by(events_table.c.id))
        if kinds:
            query = query.where(events_table.c.kind.in_(kinds))
        if annotator is not None:
            query = query.where(events_table.c.annotator == annotator)
        with self.engine.connect() as connection:
            return [Event(id=row.id, kind=row.kind, annotator=row.annotator, key=row.key,
                          data=json.loads(row.data),
                          created_at=row.created_at) for row in connection.execute(query)]
