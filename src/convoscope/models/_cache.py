"""A persistent response cache, so a re-run (or a resumed run) makes no model call it made before.

The key is a hash of the model's identity and the whole request (messages or prompt, schema,
sampling settings, seed, candidates): everything that can change the output. Only successful
generations are stored. One SQLite file, written under a lock (one writer).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
from pathlib import Path

from convoscope.models._base import GenerateRequest, Generation, Model

_SCHEMA = """
create table if not exists responses (
    key text primary key,
    model text not null,
    generation text not null,
    created_at text not null default (datetime('now'))
)"""


def cache_key(model_name: str, request: GenerateRequest) -> str:
    # Optional settings left unset are left out, so keys made before they existed still match.
    unset = {name for name in ("top_p", "presence_penalty") if getattr(request, name) is None}
    payload = json.dumps({"model": model_name, "request": request.model_dump(mode="json", exclude=unset)},
                         sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Generations by cache key, in a SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        with self._lock:
            self._connection.execute("pragma journal_mode=wal")
            self._connection.execute(_SCHEMA)
            self._connection.commit()

    def get(self, key: str) -> Generation | None:
        with self._lock:
            row = self._connection.execute("select generation from responses where key = ?",
                                           (key,)).fetchone()
        return Generation.model_validate_json(row[0]) if row else None

    def put(self, key: str, generation: Generation) -> None:
        with self._lock:
            self._connection.execute(
                "insert or replace into responses (key, model, generation) values (?, ?, ?)",
                (key, generation.model, generation.model_dump_json()))
            self._connection.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._connection.execute("select count(*) from responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._connection.close()


class CachedModel:
    """Wraps a model: answers from the cache when it can, and stores what the model says.

    Identical requests in flight at the same time share one model call.
    """

    def __init__(self, model: Model, cache: ResponseCache) -> None:
        self.inner = model
        self.cache = cache
        self._in_flight: dict[str, asyncio.Future[Generation]] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    async def generate(self, request: GenerateRequest) -> Generation:
        key = cache_key(self.inner.name, request)
        stored = self.cache.get(key)
        if stored is not None:
            return stored.model_copy(update={"cached": True, "latency_s": 0.0})
        pending = self._in_flight.get(key)
        if pending is not None:
            generation = await asyncio.shield(pending)
            return generation.model_copy(update={"cached": True, "latency_s": 0.0})
        future: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            generation = await self.inner.generate(request)
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # mark retrieved: waiters re-raise it, nobody else must
            raise
        finally:
            self._in_flight.pop(key, None)
        self.cache.put(key, generation)
        future.set_result(generation)
        return generation

    async def aclose(self) -> None:
        await self.inner.aclose()
