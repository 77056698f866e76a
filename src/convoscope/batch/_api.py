"""The batch services a :class:`~convoscope.batch._model.BatchModel` sends to, one class each.

* :class:`OpenAIBatches` — the OpenAI Batch API: upload a JSONL file (``POST /files``, purpose
  ``batch``), create the batch (``POST /batches``, one endpoint, ``metadata`` naming the ledger's
  job), poll it, read its output and error files, cancel it, delete its files.
* :class:`AnthropicBatches` — Message Batches: one ``POST /messages/batches`` with the requests,
  poll, read the results, cancel, delete the batch.
* :class:`FileBatches` — no service: each batch is written as an OpenAI-batch JSONL file (what
  vLLM's ``run_batch`` reads) and its results come back through ``convoscope batch import``.

Each turns the provider's answers into ``(request key, body)`` pairs in the OpenAI shape the live
backend reads, or ``(request key, problem)`` for a request the batch failed.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, Any

import httpx

from convoscope.models._anthropic import chat_completion, messages_params
from convoscope.models._base import GenerateRequest, ModelError
from convoscope.store._batches import BatchJob

Outcome = dict[str, Any] | str  # an answer body (OpenAI shape), or what went wrong
CHAT, COMPLETIONS, MESSAGES = "/v1/chat/completions", "/v1/completions", "/v1/messages"
# The batch's life at the provider, in the ledger's words.
_OPENAI_STATES = {"validating": "in_progress", "in_progress": "in_progress", "finalizing": "in_progress",
                  "cancelling": "in_progress", "completed": "completed", "failed": "failed",
                  "expired": "expired", "cancelled": "cancelled"}


class BatchService:
    """What every batch service does; HTTP services share one client."""

    provider = ""
    sends = True  # False: requests are recorded, never sent (an import run)
    wrapper = (b"", b"")  # bytes around the joined lines (a JSON body for Anthropic)
    separator = b"\n"

    def __init__(self, base_url: str, headers: dict[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._client = httpx.AsyncClient(base_url=self.base_url, headers=headers or {}, transport=transport,
                                         timeout=httpx.Timeout(600.0, connect=30.0))

    def endpoint(self, request: GenerateRequest) -> str:
        return CHAT if request.messages is not None else COMPLETIONS

    def line(self, key: str, request: GenerateRequest, body: dict[str, Any]) -> bytes:
        """One request as the batch file carries it (``body``: the live backend's request body)."""
        return json.dumps({"custom_id": key, "method": "POST", "url": self.endpoint(request), "body": body},
                          ensure_ascii=False, separators=(",", ":")).encode()

    async def upload(self, job: BatchJob, body: IO[bytes]) -> str | None:
        """Put the batch's body where the service reads it; returns its file id (if any)."""
        return None

    async def create(self, job: BatchJob, input_file_id: str | None, body: IO[bytes]) -> str:
        raise NotImplementedError

    async def status(self, job: BatchJob) -> dict[str, Any]:
        """Ledger fields from the service: ``state``, ``provider_status``, file ids, ``detail``."""
        raise NotImplementedError

    def results(self, job: BatchJob) -> AsyncIterator[tuple[str, Outcome]]:
        raise NotImplementedError

    async def cancel(self, job: BatchJob) -> dict[str, Any]:
        raise NotImplementedError

    async def delete(self, job: BatchJob) -> None:
        """Delete what the batch left at the service (files, the batch itself)."""

    async def find(self, job: BatchJob) -> str | None:
        """The service's id of a job whose submission was interrupted, if it was created."""
        return None

    async def aclose(self) -> None:
        await self._client.aclose()

    # -- HTTP -----------------------------------------------------------------------------------

    async def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = await self._call(method, path, **kwargs)
        try:
            data = response.json()
        except ValueError:
            raise ModelError(f"the batch API at {self.base_url} sent no JSON for {method} {path}") from None
        if not isinstance(data, dict):
            raise ModelError(f"the batch API at {self.base_url} sent {type(data).__name__} for "
                             f"{method} {path}")
        return data

    async def _lines(self, path: str) -> AsyncIterator[dict[str, Any]]:
        """A JSONL download, line by line (never held whole)."""
        async with self._client.stream("GET", path) as response:
            if response.status_code >= 400:
                await response.aread()
                raise _http_error(self.base_url, "GET", path, response)
            async for line in response.aiter_lines():
                if line.strip():
                    yield json.loads(line)

    async def _call(self, method: str, path: str, *, missing_ok: bool = False,
                    **kwargs: Any) -> httpx.Response:
        try:
            response = await self._client.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise ModelError(f"the batch API at {self.base_url} failed: {error}") from None
        if response.status_code >= 400 and not (missing_ok and response.status_code == 404):
            raise _http_error(self.base_url, method, path, response)
        return response


class OpenAIBatches(BatchService):
    provider = "openai"

    async def upload(self, job: BatchJob, body: IO[bytes]) -> str | None:
        # httpx sends a file object in chunks: the batch (up to 200 MB) is never whole in memory
        uploaded = await self._json("POST", "/files", files={"file": (f"{job.job_id}.jsonl", body)},
                                    data={"purpose": "batch"})
        return str(uploaded["id"])

    async def create(self, job: BatchJob, input_file_id: str | None, body: IO[bytes]) -> str:
        created = await self._json("POST", "/batches", json={
            "input_file_id": input_file_id, "endpoint": job.endpoint, "completion_window": "24h",
            "metadata": {"convoscope_job": job.job_id}})
        return str(created["id"])

    async def status(self, job: BatchJob) -> dict[str, Any]:
        return _openai_status(await self._json("GET", f"/batches/{job.remote_id}"))

    async def results(self, job: BatchJob) -> AsyncIterator[tuple[str, Outcome]]:
        for file_id in (job.output_file_id, job.error_file_id):
            if file_id:
                async for row in self._lines(f"/files/{file_id}/content"):
                    yield openai_outcome(row)

    async def cancel(self, job: BatchJob) -> dict[str, Any]:
        return _openai_status(await self._json("POST", f"/batches/{job.remote_id}/cancel"))

    async def delete(self, job: BatchJob) -> None:
        for file_id in (job.input_file_id, job.output_file_id, job.error_file_id):
            if file_id:
                await self._call("DELETE", f"/files/{file_id}", missing_ok=True)

    async def find(self, job: BatchJob) -> str | None:
        """Batches carry the job id in their metadata: look among the latest hundred."""
        listed = await self._json("GET", "/batches", params={"limit": 100})
        for batch in listed.get("data") or []:
            if (batch.get("metadata") or {}).get("convoscope_job") == job.job_id:
                return str(batch["id"])
        return None


class AnthropicBatches(BatchService):
    provider = "anthropic"
    wrapper = (b'{"requests":[', b"]}")
    separator = b","

    def endpoint(self, request: GenerateRequest) -> str:
        return MESSAGES

    def line(self, key: str, request: GenerateRequest, body: dict[str, Any]) -> bytes:
        params = messages_params(str(body.get("model")), request)
        return json.dumps({"custom_id": key, "params": params}, ensure_ascii=False,
                          separators=(",", ":")).encode()

    async def create(self, job: BatchJob, input_file_id: str | None, body: IO[bytes]) -> str:
        created = await self._json("POST", "/messages/batches", content=body.read(),
                                   headers={"content-type": "application/json"})
        return str(created["id"])

    async def status(self, job: BatchJob) -> dict[str, Any]:
        info = await self._json("GET", f"/messages/batches/{job.remote_id}")
        status = str(info.get("processing_status"))
        if status != "ended":
            return {"state": "in_progress", "provider_status": status}
        state = "cancelled" if job.cancel_requested_at else "completed"
        return {"state": state, "provider_status": status, "output_file_id": info.get("results_url")}

    async def results(self, job: BatchJob) -> AsyncIterator[tuple[str, Outcome]]:
        if job.output_file_id:
            async for row in self._lines(job.output_file_id):
                result = row.get("result") or {}
                if result.get("type") == "succeeded":
                    yield str(row["custom_id"]), chat_completion(result["message"])
                else:
                    problem = json.dumps(result.get("error"))[:200]
                    yield str(row["custom_id"]), f"{result.get('type')}: {problem}"

    async def cancel(self, job: BatchJob) -> dict[str, Any]:
        info = await self._json("POST", f"/messages/batches/{job.remote_id}/cancel")
        return {"state": "in_progress", "provider_status": str(info.get("processing_status"))}

    async def delete(self, job: BatchJob) -> None:
        await self._call("DELETE", f"/messages/batches/{job.remote_id}", missing_ok=True)


class FileBatches(BatchService):
    """Batches as files in ``directory`` (None: write none, as an import run does)."""

    provider = "files"

    def __init__(self, directory: str | Path | None, base_url: str) -> None:
        super().__init__(base_url)
        self.directory = None if directory is None else Path(directory)
        self.sends = self.directory is not None

    async def upload(self, job: BatchJob, body: IO[bytes]) -> str | None:
        if self.directory is None:
            raise ModelError("this run exports no batch files")
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.directory / f"{job.job_id}.jsonl"
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=target.name, suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            shutil.copyfileobj(body, out)
        os.replace(temporary, target)
        return str(target.resolve())

    async def create(self, job: BatchJob, input_file_id: str | None, body: IO[bytes]) -> str:
        return Path(input_file_id or job.job_id).name

    async def status(self, job: BatchJob) -> dict[str, Any]:
        return {"state": job.state, "provider_status": "exported"}  # results come by import

    async def cancel(self, job: BatchJob) -> dict[str, Any]:
        return {"state": "cancelled", "provider_status": "cancelled"}

    async def find(self, job: BatchJob) -> str | None:
        target = self.directory / f"{job.job_id}.jsonl" if self.directory else None
        return target.name if target is not None and target.exists() else None


def batch_service(provider: str, base_url: str, api_key: str | None) -> BatchService:
    """The HTTP batch service of ``provider`` (openai, anthropic) at ``base_url``."""
    if provider == "anthropic":
        return AnthropicBatches(base_url, {"x-api-key": api_key or "", "anthropic-version": "2023-06-01"})
    return OpenAIBatches(base_url, {"Authorization": f"Bearer {api_key}"} if api_key else {})


def openai_outcome(row: dict[str, Any]) -> tuple[str, Outcome]:
    """One line of an OpenAI-batch output or error file (the format vLLM's ``run_batch`` writes
    too): the answer body when the request succeeded, else what went wrong."""
    custom_id = row.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        raise ValueError("no custom_id")
    response = row.get("response") or {}
    body, status = response.get("body"), response.get("status_code")
    if status == 200 and not row.get("error") and isinstance(body, dict) and body.get("choices"):
        return custom_id, body
    problem = row.get("error")
    if problem is None and isinstance(body, dict):
        problem = body.get("error")
    return custom_id, f"HTTP {status}: {json.dumps(problem if problem is not None else body)[:200]}"


def _openai_status(info: dict[str, Any]) -> dict[str, Any]:
    status = str(info.get("status"))
    errors = (info.get("errors") or {}).get("data") or []
    detail = "; ".join(str(error.get("message")) for error in errors if isinstance(error, dict)) or None
    fields: dict[str, Any] = {"state": _OPENAI_STATES.get(status, "in_progress"), "provider_status": status,
                              "output_file_id": info.get("output_file_id"),
                              "error_file_id": info.get("error_file_id")}
    if detail:
        fields["detail"] = detail
    return fields


def _http_error(base_url: str, method: str, path: str, response: httpx.Response) -> ModelError:
    return ModelError(f"the batch API at {base_url} answered HTTP {response.status_code} to "
                      f"{method} {path}: {response.text[:200]}")


def completion_body(model: str, request: GenerateRequest) -> dict[str, Any]:
    """A ``/v1/completions`` body. Next-token scoring asks for one token and its top 20
    log-probabilities; the live backend's second look past a leading space is not possible in a
    batch, so such answers score from the first token only."""
    body: dict[str, Any] = {"model": model, "prompt": request.prompt, "max_tokens": request.max_tokens,
                            "temperature": request.temperature, **request.sampling()}
    if request.stop:
        body["stop"] = list(request.stop)
    if request.next_token_candidates:
        body.update(max_tokens=1, logprobs=20, temperature=0.0)
    if request.seed is not None:
        body["seed"] = request.seed
    return body
