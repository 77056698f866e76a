"""Batch APIs: half the price, answers within a day, through the same resumable run.

``--batch`` wraps the judge's model in a :class:`BatchModel`. A run then goes like this:

1. Every request no answer covers is *deferred*: the model raises :class:`ModelError`, so the
   verdict is a transient ``model_error`` — never "done". Deferred requests gather in one batch
   per endpoint (chat and completion requests never share a batch); a batch that reaches the
   provider's limit (:data:`LIMITS`) is submitted at once, the rest when the run ends.
2. Each batch is recorded in the ledger in the verdict store (:mod:`convoscope.store._batches`)
   before it is sent, so every machine sharing the store sees it and no request goes out twice.
3. The next run (same command, any process, any machine) first asks the provider about every
   open batch of its model. Finished answers go into the ledger under the request's cache key,
   the batch's files are deleted, and requests that failed or expired inside a batch are deferred
   again. Then the run replays: each answered task gets its verdict.

``FileBatches`` writes the batches as OpenAI-batch JSONL files instead (``convoscope batch
export``), whose results come back through ``convoscope batch import``: a model run offline on
one's own cluster gives the same run. The model's name equals the live backend's, so batch
answers and live answers share one cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, NamedTuple

from convoscope.batch._api import (
    CHAT,
    COMPLETIONS,
    BatchService,
    FileBatches,
    Outcome,
    batch_service,
    completion_body,
)
from convoscope.batch._gather import RECORD_EVERY, Gathering
from convoscope.models._base import GenerateRequest, Generation, ModelError
from convoscope.models._cache import cache_key, legacy_cache_key
from convoscope.models._capabilities import Capabilities
from convoscope.models._keys import redact_url
from convoscope.store._batches import ENDED_STATES, OPEN_STATES, BatchJob, BatchLedger
from convoscope.store._chunks import worker_name

DEFERRED = "deferred to a batch"
BATCH_DISCOUNT = 0.5  # both providers bill batch requests at half the list price
# A worker submitting, collecting or cancelling a job holds it by a lease it renews every
# LEASE_S / 4 (see holding); a worker killed meanwhile loses the job LEASE_S after its last renewal.
LEASE_S = 120.0


class BatchLimits(NamedTuple):
    max_requests: int
    max_bytes: int


# Each provider's documented limits per batch; MB read as 10**6 bytes, the smaller reading.
LIMITS: dict[str, BatchLimits] = {
    # OpenAI Batch API reference, "Create batch", input_file_id: "The file can contain up to
    # 50,000 requests, and can be up to 200 MB in size"; endpoint: "The endpoint to be used for
    # all requests in the batch" (one endpoint per batch).
    "openai": BatchLimits(50_000, 200_000_000),
    # Anthropic, "Batch processing", batch limitations: "A Message Batch is limited to either
    # 100,000 Message requests or 256 MB in size, whichever is reached first."
    "anthropic": BatchLimits(100_000, 256_000_000),
    # Exported files follow OpenAI's format, so they take its limits (vLLM's run_batch reads them).
    "files": BatchLimits(50_000, 200_000_000),
}
RESPONSE_FORMATS = ("json_schema", "json_object", "none")


@dataclass(frozen=True)
class BatchFiles:
    """Batches written as OpenAI-batch JSONL files in ``directory`` rather than sent to a provider
    (None: write none, as ``convoscope batch import`` runs). ``response_format``: how chat bodies
    ask for structured output — ``json_schema`` (OpenAI's form, which vLLM reads),
    ``json_object`` (with the schema beside it, as llama.cpp reads it) or ``none``."""

    directory: str | Path | None
    response_format: str = "json_schema"


class BatchModel:
    """Defers requests to a batch service (see the module docstring). ``live``: the
    OpenAI-compatible model whose name, bodies and answer parsing the batch uses."""

    def __init__(self, live: Any, service: BatchService, ledger: BatchLedger, *,
                 response_format: str | None = None, limits: BatchLimits | None = None) -> None:
        self.live, self.service, self.ledger = live, service, ledger
        self.provider = service.provider
        self.limits = limits or LIMITS[self.provider]
        self.discount = 1.0 if self.provider == "files" else BATCH_DISCOUNT
        self.worker = worker_name()
        self._shape = None if response_format is None else Capabilities(response_format, True)
        self._parts: dict[str, Gathering] = {}
        self._lock = asyncio.Lock()
        self._collected = False
        self.collected = self.failed = self.submitted = 0  # counts for the run summary
        self.job_ids: list[str] = []

    @property
    def name(self) -> str:
        return str(self.live.name)

    async def generate(self, request: GenerateRequest) -> Generation:
        await self.collect()
        key = cache_key(self.name, request)
        known = await asyncio.to_thread(self.ledger.lookup, key)
        if known is None:  # deferred before keys were cut from the request's one serialisation
            known = await asyncio.to_thread(self.ledger.lookup, legacy_cache_key(self.name, request))
        if known is not None and known.state == "answered" and known.answer:
            return Generation.model_validate_json(known.answer)
        if known is not None and known.state == "batched":
            raise ModelError(f"{self.name}: waiting for batch job {known.job_id}; run the same command "
                             "again later to collect it (convoscope batch status shows where it stands)")
        await self._defer(key, request)
        problem = known.problem if known is not None else None
        again = f" (the last batch answered it with an error: {problem})" if problem else ""
        raise ModelError(f"{self.name}: {DEFERRED}{again}; it is submitted by this run — run the same "
                         "command again later to collect the answers")

    # -- collecting ---------------------------------------------------------------------------

    async def collect(self) -> None:
        """Once per process: ask about every open job of this model and collect the finished."""
        if self._collected:
            return
        async with self._lock:
            if self._collected:
                return
            if self.provider != "files":  # exported files come back through an import
                jobs = await asyncio.to_thread(self.ledger.jobs, states=(*OPEN_STATES, *ENDED_STATES),
                                               model=self.name, provider=self.provider)
                for job in jobs:
                    await self._collect_job(job)
            self._collected = True

    async def _collect_job(self, job: BatchJob) -> None:
        while not await asyncio.to_thread(self.ledger.hold, job.job_id, self.worker, LEASE_S):
            # Another worker is submitting or collecting it: wait until it lets go (or its lease
            # runs out), so this run finds the answers the other one is writing.
            await asyncio.sleep(0.5)
            latest = await asyncio.to_thread(self.ledger.job, job.job_id)
            if latest is None or latest.state in ("collected", "submitting"):
                return  # collected by the other; or still being sent (its requests wait)
            job = latest
        try:
            async with holding(self.ledger, job.job_id, self.worker):
                job = await refresh(self.ledger, self.service, job)
                if job.state in ENDED_STATES:
                    await self._harvest(job)
        except ModelError as error:  # the job stays open; `convoscope batch status` shows why
            await asyncio.to_thread(self.ledger.update, job.job_id, detail=str(error)[:500])
        finally:
            await asyncio.to_thread(self.ledger.release, job.job_id, self.worker)

    async def _harvest(self, job: BatchJob) -> None:
        """An ended job's answers into the ledger; the job collected; its files deleted."""
        before = await asyncio.to_thread(self.ledger.counts, job.job_id)
        async for group in _grouped(self.service.results(job), 500):
            await self.record(job.job_id, group)
        unanswered = f"batch {job.remote_id} ended {job.provider_status} without an answer"
        if job.detail:
            unanswered += f": {job.detail}"
        finished = await asyncio.to_thread(self.ledger.finish, job.job_id, unanswered=unanswered)
        self.collected += finished.answered - before.get("answered", 0)
        self.failed += finished.failed - before.get("failed", 0)
        await delete_files(self.ledger, self.service, finished)

    async def record(self, job_id: str | None, outcomes: list[tuple[str, Outcome]]) -> int:
        """Answers (bodies) and failures of some requests into the ledger; returns how many
        rows changed. ``job_id`` None: any waiting request (an import)."""
        keys = [key for key, _ in outcomes]
        requests = await asyncio.to_thread(self.ledger.waiting_requests, keys, job_id, model=self.name)
        answers: dict[str, str] = {}
        problems: dict[str, str] = {}
        for key, outcome in outcomes:
            if key not in requests:
                continue  # answered already, or not this job's
            if isinstance(outcome, str):
                problems[key] = outcome
                continue
            text, structured = requests[key]
            request = GenerateRequest.model_validate_json(text)
            try:
                answers[key] = self._generation(outcome, request, structured).model_dump_json()
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
                problems[key] = f"an answer the backend cannot read ({type(error).__name__}: {error})"
        return await asyncio.to_thread(self.ledger.answer, job_id, answers, problems)

    def _generation(self, body: dict[str, Any], request: GenerateRequest,
                    structured: str | None) -> Generation:
        sent: dict[str, Any] = {"seed": request.seed, "temperature": request.temperature}
        if structured not in (None, "none"):  # what the job's bodies asked for, recorded on the answer
            sent["response_format"] = {"type": structured}
        generation = self.live._generation(body, request, sent, 0.0)
        cost = None if generation.cost is None else generation.cost * self.discount
        return generation.model_copy(update={"cost": cost})

    # -- submitting ---------------------------------------------------------------------------

    async def _body(self, request: GenerateRequest) -> dict[str, Any]:
        """The live backend's request body. Chat bodies ask for structured output in the form the
        endpoint takes, found out once on its live route (exported files: the form given)."""
        if request.messages is None:
            return completion_body(self.live.model, request)
        if self._shape is None:  # Anthropic's batches keep the schema in the prompt (messages_params)
            self._shape = await self.live.capabilities() if self.provider == "openai" else Capabilities(
                "none", False)
        return self.live._chat_body(request, self._shape)

    async def _defer(self, key: str, request: GenerateRequest) -> None:
        endpoint = self.service.endpoint(request)
        line = self.service.line(key, request, await self._body(request))
        max_requests, max_bytes = self.limits
        overhead = sum(len(part) for part in self.service.wrapper) + 1
        if len(line) + overhead > max_bytes:
            raise ModelError(f"{self.name}: a request of {len(line)} bytes is larger than a whole batch "
                             f"may be ({max_bytes} bytes)")
        async with self._lock:
            part = self._parts.get(endpoint)
            if part is not None and key in part:
                return
            if part is not None and (len(part) + 1 > max_requests
                                     or part.size + len(line) + 1 + overhead > max_bytes):
                del self._parts[endpoint]
                await self._submit(endpoint, part)  # full: it goes now
            part = self._parts.setdefault(endpoint, Gathering())
            part.add(key, line, request.model_dump_json())
            recorded = part.unrecorded(at_least=RECORD_EVERY)
            if recorded:
                await asyncio.to_thread(self.ledger.defer, self.name, recorded)

    async def _submit(self, endpoint: str, part: Gathering) -> None:
        """Record the part's requests, take those nobody else took into a job, send it."""
        try:
            await asyncio.to_thread(self.ledger.defer, self.name, part.unrecorded())
            if not self.service.sends:
                return  # an import run sends nothing: the requests wait, pending, for the next export
            opened = await asyncio.to_thread(
                self.ledger.open_job, provider=self.provider, base_url=redact_url(self.service.base_url),
                model=self.name, endpoint=endpoint, keys=part.keys, size=part.size, worker=self.worker,
                lease_s=LEASE_S,
                structured=None if self._shape is None or endpoint == COMPLETIONS else self._shape.structured)
            if opened is None:
                return  # another worker has sent every one of them
            job, taken = opened
            body = await asyncio.to_thread(part.body, taken, self.service.wrapper, self.service.separator)
        finally:
            part.close()
        try:
            async with holding(self.ledger, job.job_id, self.worker):
                await send(self.ledger, self.service, job, body)
        finally:
            body.close()
        self.submitted += len(taken)
        self.job_ids.append(job.job_id)

    async def aclose(self) -> None:
        try:
            async with self._lock:
                while self._parts:
                    endpoint, part = self._parts.popitem()
                    await self._submit(endpoint, part)
        finally:
            await self.service.aclose()
            await self.live.aclose()


# -- one job: shared by runs and by the batch commands ---------------------------------------------

async def send(ledger: BatchLedger, service: BatchService, job: BatchJob, body: IO[bytes]) -> BatchJob:
    """Upload and create a job's batch (``body``: its content, a file read from the start); a
    failure before the batch exists gives its requests back."""
    file_id: str | None = None
    try:
        file_id = await service.upload(job, body)
        if file_id is not None:
            await asyncio.to_thread(ledger.update, job.job_id, input_file_id=file_id)
        job = replace(job, input_file_id=file_id)
        remote = await service.create(job, file_id, body)
    except ModelError as error:
        await asyncio.to_thread(ledger.abandon, job.job_id, str(error)[:500])
        if file_id is not None and service.provider == "openai":
            await _quietly(service.delete(job))
        raise
    fields: dict[str, Any] = {"remote_id": remote, "state": "submitted", "submitted_at": time.time(),
                              "owner": None, "lease_until": None}
    await asyncio.to_thread(ledger.update, job.job_id, **fields)
    return replace(job, **fields)


async def refresh(ledger: BatchLedger, service: BatchService, job: BatchJob) -> BatchJob:
    """Ask the service where an open job stands and record it. A job whose submission was
    interrupted (its worker's lease ran out) is found at the service or given back."""
    if job.state == "submitting":
        remote = await service.find(job)
        if remote is None:
            await asyncio.to_thread(ledger.abandon, job.job_id, "the submission was interrupted before the "
                                    "batch was created; its requests are deferred again")
            if job.input_file_id and service.provider == "openai":
                await _quietly(service.delete(job))
            refreshed = await asyncio.to_thread(ledger.job, job.job_id)
            return refreshed or job
        fields: dict[str, Any] = {"remote_id": remote, "state": "submitted", "submitted_at": time.time()}
        await asyncio.to_thread(ledger.update, job.job_id, **fields)
        job = replace(job, **fields)
    if job.state not in OPEN_STATES:
        return job
    status = await service.status(job)
    if status["state"] in ENDED_STATES:
        status["ended_at"] = time.time()
    await asyncio.to_thread(ledger.update, job.job_id, **status)
    return replace(job, **status)


@contextlib.asynccontextmanager
async def holding(ledger: BatchLedger, job_id: str, worker: str) -> AsyncIterator[None]:
    """While the body runs, renew ``worker``'s lease on the job every LEASE_S / 4, so a long
    upload or download keeps it and a killed worker's job is free LEASE_S after it died."""
    async def renew() -> None:
        while True:
            await asyncio.sleep(LEASE_S / 4)
            await asyncio.to_thread(ledger.renew, job_id, worker, LEASE_S)

    renewing = asyncio.create_task(renew())
    try:
        yield
    finally:
        renewing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewing


async def delete_files(ledger: BatchLedger, service: BatchService, job: BatchJob) -> bool:
    """Delete what a collected job left at the service; a failure is noted (cleanup retries)."""
    try:
        await service.delete(job)
    except ModelError as error:
        await asyncio.to_thread(ledger.update, job.job_id, detail=f"files not deleted: {error}"[:500])
        return False
    await asyncio.to_thread(ledger.update, job.job_id, files_deleted_at=time.time())
    return True


async def _quietly(work: Any) -> None:
    try:
        await work
    except ModelError:
        pass  # best effort: `convoscope batch cleanup` finds what is left


async def _grouped(rows: AsyncIterator[tuple[str, Outcome]], size: int
                   ) -> AsyncIterator[list[tuple[str, Outcome]]]:
    group: list[tuple[str, Outcome]] = []
    async for row in rows:
        group.append(row)
        if len(group) >= size:
            yield group
            group = []
    if group:
        yield group


def batch_model(live: Any, batch: str | BatchFiles, *, ledger: Any, api_key: str | None = None,
                cache: Any = None, max_requests: int | None = None,
                max_bytes: int | None = None) -> BatchModel:
    """A :class:`BatchModel` for ``batch`` (``"openai"``, ``"anthropic"`` or :class:`BatchFiles`)
    at the live model's base URL, its ledger in ``ledger`` (a Store, a BatchLedger or an engine).
    ``max_requests`` and ``max_bytes`` replace the provider's documented limits per batch
    (:data:`LIMITS`): a service that accepts less (a gateway, a self-hosted batch server)."""
    if isinstance(batch, str) and batch not in ("openai", "anthropic"):
        raise ModelError(f"unknown batch API {batch!r}: use openai or anthropic")
    limits = batch_limits(batch if isinstance(batch, str) else "files", max_requests, max_bytes)
    if ledger is None:
        raise ModelError("batch mode keeps its ledger in the verdict store: give a store (ledger=)")
    book = ledger if isinstance(ledger, BatchLedger) else BatchLedger(getattr(ledger, "engine", ledger))
    if cache is not None:
        adopt_json_ledger(book, Path(str(getattr(cache, "path", cache)) + ".batches.json"), live.name,
                          live.base_url)
    if isinstance(batch, BatchFiles):
        if batch.response_format not in RESPONSE_FORMATS:
            raise ModelError(f"response format {batch.response_format!r}: use one of "
                             f"{', '.join(RESPONSE_FORMATS)}")
        return BatchModel(live, FileBatches(batch.directory, live.base_url), book,
                          response_format=batch.response_format, limits=limits)
    return BatchModel(live, batch_service(batch, live.base_url, api_key), book, limits=limits)


def batch_limits(provider: str, max_requests: int | None = None, max_bytes: int | None = None) -> BatchLimits:
    """The provider's limits per batch, with those given in their place."""
    documented = LIMITS[provider]
    for name, value in (("max_requests", max_requests), ("max_bytes", max_bytes)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ModelError(f"batch {name} must be a whole number of at least 1, not {value!r}")
    return BatchLimits(max_requests or documented.max_requests, max_bytes or documented.max_bytes)


def adopt_json_ledger(ledger: BatchLedger, path: Path, model: str, base_url: str) -> None:
    """Batches recorded by earlier versions in a JSON file beside the response cache move into
    the store's ledger (the file is renamed ``….adopted``), so they are collected, not paid again."""
    if not path.exists():
        return
    batches: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    for remote_id, batch in batches.items():
        requests = {key: json.dumps(request) for key, request in batch.get("requests", {}).items()}
        ledger.adopt(provider=str(batch.get("provider", "openai")), base_url=redact_url(base_url),
                     model=model, endpoint=CHAT, remote_id=remote_id, requests=requests,
                     submitted_at=float(batch.get("submitted_at", time.time())))
    path.rename(path.with_name(path.name + ".adopted"))
