"""A persistent response cache, so a re-run (or a resumed run) makes no model call it made before.

The key is a hash of the model's identity and the whole request (messages or prompt, schema,
sampling settings, seed, candidates): everything that can change the output, hashed from the bytes
the request is serialised to once (``GenerateRequest.wire``, which its task key hashes and its body
is cut from). Keys are ``v2:`` and a SHA-256, 64 characters in all; a cache written before them
(plain SHA-256 of another serialisation) is still read: on a miss the old key is asked too, only in
such a cache. Only successful generations are stored. One SQLite file, written by one thread in
grouped commits.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from convoscope._gather import LINGER_S, gather
from convoscope._rows import insert_rows
from convoscope.errors import LocatedError
from convoscope.models._base import GenerateRequest, Generation, Model

_ATTACHED = "convoscope_cache"  # the cache's name in a verdict store's connection (write_into)
_SCHEMA = """
create table if not exists responses (
    key text primary key,
    model text not null,
    generation text not null,
    created_at text not null default (datetime('now'))
)"""


KEY_PREFIX = "v2:"
KEY_LENGTH = 64  # the store keeps keys in VARCHAR(64) columns (the batch ledger), which PostgreSQL enforces


def cache_key(model_name: str, request: GenerateRequest) -> str:
    """The request's key: a hash of the model's name and the request's one serialisation (``v2:`` and
    the first 61 hex digits of a SHA-256, 244 bits: 64 characters, as the store's key columns hold)."""
    hashed = hashlib.sha256(model_name.encode() + b"\n")
    hashed.update(request.wire)  # not concatenated: the ~4.5 kB request is not copied to be hashed
    digest = hashed.hexdigest()
    return (KEY_PREFIX + digest)[:KEY_LENGTH]


def legacy_cache_key(model_name: str, request: GenerateRequest) -> str:
    """The key caches written before ``v2:`` keys used (a second serialisation of the request)."""
    # Optional settings left unset are left out, so keys made before they existed still match.
    unset = {name for name in ("top_p", "presence_penalty") if getattr(request, name) is None}
    payload = json.dumps({"model": model_name, "request": request.model_dump(mode="json", exclude=unset)},
                         sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Generations by cache key, in a SQLite file (WAL, ``synchronous=NORMAL``).

    ``put`` only hands the row to one writer thread, which commits whatever has queued up in a
    single transaction, so the event loop never waits for the disk and a burst of answers costs
    one commit, not one each. A row is readable at once (from memory until it is written);
    :meth:`flush` waits until everything put so far is on disk, and :meth:`close` flushes too.
    Several processes may share the file: SQLite serialises their writers.
    """

    def __init__(self, path: str | Path, *, batch: int = 256) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.commits = 0  # how many write transactions so far (for tests and benchmarks)
        self._batch = batch
        self._read_lock = threading.Lock()
        self._reader = self._connect()
        # Rows keyed the old way (hex only, so below "v"): look their keys up too on a miss.
        self.legacy = self._reader.execute("select 1 from responses where key < 'v' limit 1").fetchone() \
            is not None
        self._pending: dict[str, Generation] = {}
        self._joined: Callable[[str, Generation], None] | None = None
        self._held: list[tuple[str, Generation]] | None = None  # see hold()
        self._gathered: list[tuple[str, Generation]] = []
        self._gather_lock = threading.Lock()
        self._scheduled: asyncio.TimerHandle | None = None
        self._queue: queue.Queue[list[tuple[str, Generation]] | threading.Event | None] = queue.Queue()
        self._writer = threading.Thread(target=self._write_loop, name=f"cache-writer:{self.path.name}",
                                        daemon=True)
        self._closed = False
        self._writer.start()
        atexit.register(self.close)  # a cache nobody closed still gets its last rows written

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        try:
            connection.execute("pragma journal_mode=wal")
            connection.execute("pragma synchronous=normal")  # durable across crashes of this process
            connection.execute(_SCHEMA)
            connection.commit()
        except sqlite3.DatabaseError as error:
            connection.close()
            if "not a database" not in str(error):
                raise
            raise LocatedError(self.path, "cannot be used as a response cache: not a SQLite "
                               "database (the cache path points at another kind of file)") from None
        return connection

    def get(self, key: str) -> Generation | None:
        pending = self._pending.get(key)
        if pending is not None:
            return pending
        with self._read_lock:
            row = self._reader.execute("select generation from responses where key = ?", (key,)).fetchone()
        return Generation.model_validate_json(row[0]) if row else None

    def get_many(self, keys: list[str]) -> dict[str, Generation]:
        """The stored ones of ``keys``, in one query per 500 keys (call it off the event loop)."""
        found = {key: self._pending[key] for key in keys if key in self._pending}
        wanted = [key for key in keys if key not in found]
        with self._read_lock:
            for start in range(0, len(wanted), 500):
                part = wanted[start:start + 500]
                marks = ",".join("?" * len(part))
                rows = self._reader.execute(
                    f"select key, generation from responses where key in ({marks})", part).fetchall()
                found.update((key, Generation.model_validate_json(data)) for key, data in rows)
        return found

    def join(self, sink: Callable[[str, Generation], None]) -> None:
        """Hand what is put to ``sink`` instead of this cache's writer thread, until :meth:`leave`:
        a run's verdict writer, which commits the rows with the verdicts they became, in one
        transaction (:meth:`write_into`, :meth:`committed`), so a verdict costs one durable write.
        What was put while held goes to ``sink`` now."""
        self._joined = sink
        held, self._held = self._held or [], None
        for key, generation in held:
            sink(key, generation)

    def hold(self) -> None:
        """Keep what is put (readable at once) for the writer that will :meth:`join`: answers that
        come before a run's store is set up (runs._head). Written here if none joins by close."""
        if self._held is None:
            self._held = []

    def _release(self) -> None:
        held, self._held = self._held or [], None
        for key, generation in held:
            self.put(key, generation)

    def leave(self) -> None:
        self._joined = None

    def write_into(self, connection: Any, rows: list[tuple[str, Generation]]) -> None:
        """Write ``rows`` in the caller's transaction on another SQLite database (a SQLAlchemy
        connection to the verdict store), with this cache's file attached to it. Call it before
        anything else in the transaction: a file cannot be attached within one. The file is
        attached once per database connection (``connection.info`` lives as long as it does,
        across checkouts from the pool), not looked up in ``pragma database_list`` every commit."""
        if connection.info.get(_ATTACHED) != str(self.path):
            attached = {row[1] for row in connection.exec_driver_sql("pragma database_list")}
            if _ATTACHED in attached:  # another cache's file (or one attached before info was kept)
                connection.exec_driver_sql(f"detach database {_ATTACHED}")
            connection.exec_driver_sql(f"attach database ? as {_ATTACHED}", (str(self.path),))
            connection.exec_driver_sql(f"pragma {_ATTACHED}.synchronous=normal")  # as the cache's own
            connection.info[_ATTACHED] = str(self.path)
        _insert(connection.exec_driver_sql, f"{_ATTACHED}.", rows)

    def committed(self, rows: list[tuple[str, Generation]]) -> None:
        """Rows another writer committed: read from the file from now on."""
        self.commits += 1
        for key, generation in rows:
            if self._pending.get(key) is generation:
                self._pending.pop(key, None)

    def put(self, key: str, generation: Generation) -> None:
        """Store a generation. Readable at once; on the event loop, puts made within a few
        milliseconds reach the writer thread together (one wake-up, not one per answer)."""
        if self._closed:
            raise RuntimeError(f"the response cache {self.path} is closed")
        self._pending[key] = generation
        joined = self._joined
        if joined is not None:
            joined(key, generation)
            return
        if self._held is not None:
            self._held.append((key, generation))
            return
        with self._gather_lock:
            self._gathered.append((key, generation))
            full = len(self._gathered) >= 64
        if full:
            self._hand_over()
        elif self._scheduled is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._hand_over()
                return
            self._scheduled = loop.call_later(0.005, self._hand_over)

    def _hand_over(self) -> None:
        with self._gather_lock:  # flush() and close() may come from another thread
            scheduled, self._scheduled = self._scheduled, None
            rows, self._gathered = self._gathered, []
        if scheduled is not None:
            scheduled.cancel()
        if rows:
            self._queue.put(rows)

    def flush(self) -> None:
        """Block until every row put so far is committed."""
        if self._closed:
            return
        self._release()
        self._hand_over()
        done = threading.Event()
        self._queue.put(done)
        done.wait()

    def _write_loop(self) -> None:
        connection = self._connect()
        try:
            committed = 0.0
            while True:
                entry = self._queue.get()
                if entry is None:
                    return
                rows, waiters, stop = gather(self._queue, entry, batch=self._batch,
                                             until=committed + LINGER_S)
                if rows:
                    _insert(connection.execute, "", rows)
                    connection.commit()
                    committed = time.monotonic()
                    self.commits += 1
                    for key, generation in rows:
                        if self._pending.get(key) is generation:
                            self._pending.pop(key, None)
                for waiter in waiters:
                    waiter.set()
                if stop:
                    return
        finally:
            connection.close()

    def __len__(self) -> int:
        self.flush()
        with self._read_lock:
            return int(self._reader.execute("select count(*) from responses").fetchone()[0])

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._release()
        self._hand_over()
        self._closed = True
        self._queue.put(None)
        self._writer.join()
        atexit.unregister(self.close)
        with self._read_lock:
            self._reader.close()


class CachedModel:
    """Wraps a model: answers from the cache when it can, and stores what the model says.

    Identical requests in flight at the same time share one model call.
    """

    def __init__(self, model: Model, cache: ResponseCache) -> None:
        self.inner = model
        self.cache = cache
        self._in_flight: dict[str, asyncio.Future[Generation]] = {}
        # What prefetch found for requests about to be sent, by the request object: its key, and
        # the stored generation (None: known not to be stored). Taken out when generate uses it.
        self._prefetched: dict[int, tuple[str, Generation | None]] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    def prefetch(self, requests: list[GenerateRequest]) -> None:
        """Key these requests and look them all up at once — in a worker thread, ahead of
        :meth:`generate`, so the event loop neither hashes a request nor reads the cache file."""
        keys = [cache_key(self.inner.name, request) for request in requests]
        found = self.cache.get_many(keys)
        if self.cache.legacy:
            old = {legacy_cache_key(self.inner.name, request): key
                   for request, key in zip(requests, keys, strict=True) if key not in found}
            found.update((old[key], generation) for key, generation in self.cache.get_many(list(old)).items())
        self._prefetched.update((id(request), (key, found.get(key)))
                                for request, key in zip(requests, keys, strict=True))

    async def generate(self, request: GenerateRequest) -> Generation:
        known = self._prefetched.pop(id(request), None)
        if known is not None:
            key, stored = known
            stored = stored or self.cache._pending.get(key)
        else:
            key = cache_key(self.inner.name, request)
            stored = self.cache.get(key)
            if stored is None and self.cache.legacy:
                stored = self.cache.get(legacy_cache_key(self.inner.name, request))
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
        await asyncio.to_thread(self.cache.flush)  # the cache may be shared: flushed, not closed


def _insert(execute: Any, schema: str, rows: list[tuple[str, Generation]]) -> None:
    """Write answers to ``schema``'s responses table (``""``, or an attached file's ``"name."``)
    with ``execute(sql, parameters)``: a few multi-row statements, not a GIL hand-over per row
    (convoscope._rows)."""
    insert_rows(execute, f"insert or replace into {schema}responses (key, model, generation) values ", "",
                [(key, generation.model, generation.model_dump_json()) for key, generation in rows])
