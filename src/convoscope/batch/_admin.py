"""The batch ledger's commands: where batches stand, cancel them, clean up after them, and
import the results of exported batch files (``convoscope batch status|cancel|cleanup|import``).

Each reaches a job's service with the key the job's base URL is given (see :mod:`._keys`), holds
the job (a lease in the ledger) while it works on it, and records what the service said.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convoscope.batch._api import BatchService, FileBatches, Outcome, batch_service, openai_outcome
from convoscope.batch._model import (
    LEASE_S,
    BatchFiles,
    BatchModel,
    batch_model,
    delete_files,
    holding,
    refresh,
)
from convoscope.errors import LocatedError
from convoscope.models._base import ModelError
from convoscope.models._keys import resolve_api_key
from convoscope.store._batches import OPEN_STATES, BatchJob, BatchLedger

_WORKER = "convoscope batch"


@dataclass(frozen=True)
class KeyOptions:
    """Which API key each job's base URL gets (as for judges: ``api_key_env`` names variables)."""

    api_key_env: str | Mapping[str, str] | None = None
    allow_insecure: bool = False


def service_for(job: BatchJob, keys: KeyOptions) -> BatchService:
    """The service a job was sent to."""
    if job.provider == "files":
        return FileBatches(Path(job.input_file_id).parent if job.input_file_id else None, job.base_url)
    key = resolve_api_key(job.base_url, api_key_env=keys.api_key_env, allow_insecure=keys.allow_insecure)
    return batch_service(job.provider, job.base_url, key)


async def _each(ledger: BatchLedger, jobs: Sequence[BatchJob], keys: KeyOptions, work: Any) -> list[BatchJob]:
    """``work(service, job)`` on each job this process can hold; problems go to the job's detail."""
    done: list[BatchJob] = []
    worker = f"{_WORKER}:{time.time()}"
    for job in jobs:
        if not await asyncio.to_thread(ledger.hold, job.job_id, worker, LEASE_S):
            done.append(job)  # another worker holds it: shown as the ledger has it
            continue
        service = service_for(job, keys)
        try:
            async with holding(ledger, job.job_id, worker):
                done.append(await work(service, job))
        except ModelError as error:
            await asyncio.to_thread(ledger.update, job.job_id, detail=str(error)[:500])
            done.append(job)
        finally:
            await service.aclose()
            await asyncio.to_thread(ledger.release, job.job_id, worker)
    latest = [await asyncio.to_thread(ledger.job, job.job_id) for job in done]
    return [found or job for found, job in zip(latest, done, strict=True)]


async def batch_status(ledger: BatchLedger, *, refresh_open: bool = True, include_collected: bool = False,
                       keys: KeyOptions = KeyOptions()) -> list[BatchJob]:
    """Every job (collected ones only with ``include_collected``); open provider jobs are asked
    about first unless ``refresh_open`` is False."""
    jobs = await asyncio.to_thread(ledger.jobs)
    if refresh_open:
        asked = [job for job in jobs if job.state in OPEN_STATES and job.provider != "files"]

        async def ask(service: BatchService, job: BatchJob) -> BatchJob:
            return await refresh(ledger, service, job)

        await _each(ledger, asked, keys, ask)
        jobs = await asyncio.to_thread(ledger.jobs)
    return [job for job in jobs if include_collected or job.state != "collected"]


async def cancel_batches(ledger: BatchLedger, job_ids: Sequence[str] = (), *,
                         keys: KeyOptions = KeyOptions()) -> list[BatchJob]:
    """Cancel the open jobs named (all open jobs when none are). A provider batch keeps the
    answers it finished (the next run collects them); an exported file's requests are deferred
    again (the next export writes them anew)."""
    jobs = await asyncio.to_thread(ledger.jobs, states=OPEN_STATES, ids=list(job_ids) or None)
    missing = set(job_ids) - {job.job_id for job in jobs}
    if missing:
        raise ModelError(f"no open batch job {', '.join(sorted(missing))} in the ledger "
                         "(convoscope batch status lists them)")

    async def cancel(service: BatchService, job: BatchJob) -> BatchJob:
        if job.provider == "files":
            await asyncio.to_thread(ledger.abandon, job.job_id, "its requests are deferred again",
                                    status="cancelled")
            return job
        job = await refresh(ledger, service, job)
        if job.state not in OPEN_STATES:
            return job
        fields = {**await service.cancel(job), "cancel_requested_at": time.time()}
        await asyncio.to_thread(ledger.update, job.job_id, **fields)
        return job

    return await _each(ledger, jobs, keys, cancel)


@dataclass(frozen=True)
class Cleanup:
    files_deleted: int
    recovered: int
    forgotten: int


async def clean_up_batches(ledger: BatchLedger, *, forget_older_than_s: float | None = None,
                           keys: KeyOptions = KeyOptions()) -> Cleanup:
    """Delete what collected jobs left at their service, settle submissions that were
    interrupted (found at the service, or their requests deferred again), and with
    ``forget_older_than_s`` drop collected jobs older than that from the ledger (the answers stay)."""
    jobs = await asyncio.to_thread(ledger.jobs)
    leftover = [job for job in jobs if job.state == "collected" and job.files_deleted_at is None
                and job.provider != "files" and (job.input_file_id or job.remote_id)]
    stale = [job for job in jobs if job.state == "submitting" and (job.lease_until or 0) < time.time()]
    deleted = 0

    async def delete(service: BatchService, job: BatchJob) -> BatchJob:
        nonlocal deleted
        deleted += await delete_files(ledger, service, job)
        return job

    async def settle(service: BatchService, job: BatchJob) -> BatchJob:
        return await refresh(ledger, service, job)

    await _each(ledger, leftover, keys, delete)
    await _each(ledger, stale, keys, settle)
    forgotten: list[str] = []
    if forget_older_than_s is not None:
        cutoff = time.time() - forget_older_than_s
        forgotten = [job.job_id for job in await asyncio.to_thread(ledger.jobs, states=("collected",))
                     if (job.collected_at or 0) < cutoff]
        await asyncio.to_thread(ledger.forget, forgotten)
    return Cleanup(deleted, len(stale), len(forgotten))


# -- import ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Imported:
    files: int
    lines: int
    answered: int
    failed: int
    already: int  # lines whose request had its answer already (an import run twice)


def result_files(paths: Sequence[str | Path]) -> list[Path]:
    """Result files: each path, or every ``*.jsonl`` in a folder."""
    found: list[Path] = []
    for path in map(Path, paths):
        found.extend(sorted(path.glob("*.jsonl")) if path.is_dir() else [path])
    if not found:
        raise LocatedError(", ".join(map(str, paths)), "no result files (.jsonl) found")
    return found


def _outcomes(path: Path) -> Iterator[tuple[int, str, Outcome]]:
    with path.open(encoding="utf-8") as lines:
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
                key, outcome = openai_outcome(row if isinstance(row, dict) else {})
            except json.JSONDecodeError:
                raise LocatedError(path, "not a JSON object", line=number) from None
            except ValueError:
                raise LocatedError(path, "no request id", line=number, field="custom_id") from None
            yield number, key, outcome


async def import_results(paths: Sequence[str | Path], models: Sequence[BatchModel], ledger: BatchLedger
                         ) -> Imported:
    """Answers from OpenAI-batch result files (vLLM's ``run_batch`` output) into the ledger, each
    request answered once. Every file is checked first — each line a JSON object whose
    ``custom_id`` is a request the ledger knows — so bad input changes nothing."""
    files = result_files(paths)
    total = 0
    for path in files:
        group: list[tuple[int, str]] = []
        for number, key, _ in _outcomes(path):
            total += 1
            group.append((number, key))
            if len(group) >= 500:
                await _check_known(ledger, path, group)
                group = []
        await _check_known(ledger, path, group)
    changed = 0
    for path in files:
        group_outcomes: list[tuple[str, Outcome]] = []
        for _, key, outcome in _outcomes(path):
            group_outcomes.append((key, outcome))
            if len(group_outcomes) >= 500:
                changed += await _record(models, group_outcomes)
                group_outcomes = []
        changed += await _record(models, group_outcomes)
    answered, failed = await asyncio.to_thread(_settle_exports, ledger)
    return Imported(len(files), total, answered, failed, total - changed)


async def _check_known(ledger: BatchLedger, path: Path, group: list[tuple[int, str]]) -> None:
    known = await asyncio.to_thread(ledger.known, [key for _, key in group])
    for number, key in group:
        if key not in known:
            raise LocatedError(path, f"request {key[:16]}… is not in this store's batch ledger (results of "
                               "another store's export?)", line=number, field="custom_id")


async def _record(models: Sequence[BatchModel], outcomes: list[tuple[str, Outcome]]) -> int:
    return sum([await model.record(None, outcomes) for model in models])


def _settle_exports(ledger: BatchLedger) -> tuple[int, int]:
    """Exported jobs with no request left waiting are collected; returns answered and failed
    requests over the jobs collected now."""
    answered = failed = 0
    for job in ledger.jobs(states=("submitted",), provider="files"):
        counts = ledger.counts(job.job_id)
        if not counts.get("batched"):
            finished = ledger.finish(job.job_id, unanswered="", provider_status="imported",
                                     ended_at=time.time())
            answered, failed = answered + finished.answered, failed + finished.failed
    return answered, failed


def import_models(specs: Sequence[str], ledger: BatchLedger) -> list[BatchModel]:
    """A batch model per distinct ``openai:`` judge spec, to read answers with (sends nothing)."""
    from convoscope.models._registry import model_from_spec

    models: list[BatchModel] = []
    for spec in dict.fromkeys(specs):
        if spec.startswith("openai:"):
            models.append(batch_model(model_from_spec(spec), BatchFiles(None), ledger=ledger))
    if not models:
        raise ModelError("importing batch results needs an openai:MODEL@BASE_URL judge")
    return models
