"""Provider batch APIs: half the price, answers within a day, through the same resumable run.

``--batch`` wraps the judge's model in a :class:`BatchModel`. A run then goes like this:

1. Every request the response cache cannot answer is *deferred*: the model records it and
   raises :class:`ModelError`, so the verdict is a transient ``model_error`` — never "done".
2. When the run ends (``aclose``), the deferred requests are submitted as one batch (OpenAI
   Batch API: upload a JSONL file, create the batch; Anthropic Message Batches: one POST). The
   batch is written to a ledger beside the response cache, so the process may exit.
3. The next run (same command, any process) first asks the provider about every open batch.
   Finished answers go into the response cache under the request's cache key; requests that
   failed or expired inside the batch leave the ledger and are deferred again, so they are
   resubmitted. Then the run replays from the cache: each answered task gets its verdict.

The model's name equals the live backend's, so batch answers and live answers share one cache.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

import httpx

from convoscope.models._anthropic import chat_completion, messages_params
from convoscope.models._base import GenerateRequest, Generation, ModelError
from convoscope.models._cache import ResponseCache, cache_key

Provider = Literal["openai", "anthropic"]
DEFERRED = "deferred to a batch"
BATCH_DISCOUNT = 0.5  # both providers bill batch requests at half the list price


class BatchLedger:
    """Open batches and the cache keys (with requests) each one carries, in a JSON file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.batches: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            self.batches = json.loads(self.path.read_text(encoding="utf-8"))

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(self.batches, out)
        os.replace(temporary, self.path)

    def open_keys(self) -> dict[str, str]:
        """cache key -> id of the open batch that carries it."""
        return {key: batch_id for batch_id, batch in self.batches.items() for key in batch["requests"]}


class BatchModel:
    """Defers requests to a provider's batch API (see the module docstring).

    ``live`` is the OpenAI-compatible model whose name, endpoint and request bodies the batch
    uses (for ``provider="anthropic"`` only its name and key; bodies follow the Messages API).
    """

    def __init__(self, live: Any, *, cache: ResponseCache, provider: Provider = "openai",
                 base_url: str | None = None, api_key: str | None = None,
                 completion_window: str = "24h", transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.live, self.cache, self.provider = live, cache, provider
        self.base_url = (base_url or getattr(live, "base_url", None) or "https://api.openai.com/v1").rstrip("/")
        self.ledger = BatchLedger(Path(str(cache.path) + ".batches.json"))
        self.completion_window = completion_window
        headers = ({"x-api-key": api_key or "", "anthropic-version": "2023-06-01"}
                   if provider == "anthropic" else {"Authorization": f"Bearer {api_key}"} if api_key else {})
        self._client = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=120,
                                         transport=transport)
        self._pending: dict[str, GenerateRequest] = {}
        self._collected = False
        self._lock = asyncio.Lock()
        self.collected = self.failed = self.submitted = 0  # counts for the run summary
        self.failures: dict[str, str] = {}  # cache key -> what the batch said about it
        self.batch_ids: list[str] = []

    @property
    def name(self) -> str:
        return str(self.live.name)

    async def generate(self, request: GenerateRequest) -> Generation:
        await self.collect()
        key = cache_key(self.name, request)
        answered = self.cache.get(key)
        if answered is not None:
            return answered
        waiting = self.ledger.open_keys().get(key)
        if waiting is not None:
            raise ModelError(f"{self.name}: waiting for batch {waiting}; run again later to collect it")
        self._pending[key] = request
        previous = self.failures.get(key)
        again = f" (the last batch answered it with an error: {previous})" if previous else ""
        raise ModelError(f"{self.name}: {DEFERRED}{again}; it is submitted when this run ends — run the "
                         "same command again later to collect the answers")

    # -- collecting --------------------------------------------------------------------------

    async def collect(self) -> None:
        """Once per process: fetch every finished open batch into the cache."""
        if self._collected:
            return
        async with self._lock:
            if self._collected:
                return
            for batch_id in list(self.ledger.batches):
                await self._collect_one(batch_id)
            self.ledger.save()
            self.cache.flush()
            self._collected = True

    async def _collect_one(self, batch_id: str) -> None:
        batch = self.ledger.batches[batch_id]
        status, results = await (self._anthropic_results(batch_id) if self.provider == "anthropic"
                                 else self._openai_results(batch_id))
        if status == "running":
            return
        requests = batch["requests"]
        for key, outcome in results.items():
            if key not in requests:
                continue
            request = GenerateRequest.model_validate(requests[key])
            if isinstance(outcome, dict):
                self.cache.put(key, self._generation(outcome, request))
                self.collected += 1
            else:
                self.failures[key] = outcome
                self.failed += 1
        for key in requests:
            if key not in results:
                self.failures[key] = f"batch {batch_id} ended {status} without an answer"
                self.failed += 1
        del self.ledger.batches[batch_id]  # whatever did not come back is deferred again next run

    async def _openai_results(self, batch_id: str) -> tuple[str, dict[str, Any]]:
        info = await self._json("GET", f"/batches/{batch_id}")
        status = info.get("status")
        if status in ("validating", "in_progress", "finalizing", "cancelling"):
            return "running", {}
        results: dict[str, Any] = {}
        for file_field in ("output_file_id", "error_file_id"):
            if info.get(file_field):
                for line in (await self._text(f"/files/{info[file_field]}/content")).splitlines():
                    if line.strip():
                        row = json.loads(line)
                        response = row.get("response") or {}
                        ok = response.get("status_code") == 200 and not row.get("error")
                        results[row["custom_id"]] = response.get("body") if ok else _problem(row)
        return status or "failed", results

    async def _anthropic_results(self, batch_id: str) -> tuple[str, dict[str, Any]]:
        info = await self._json("GET", f"/messages/batches/{batch_id}")
        if info.get("processing_status") != "ended":
            return "running", {}
        results: dict[str, Any] = {}
        text = await self._text(info["results_url"]) if info.get("results_url") else ""
        for line in text.splitlines():
            if line.strip():
                row = json.loads(line)
                result = row.get("result") or {}
                problem = f"{result.get('type')}: {json.dumps(result.get('error'))[:200]}"
                results[row["custom_id"]] = (chat_completion(result["message"])
                                             if result.get("type") == "succeeded" else problem)
        return "ended", results

    def _generation(self, body: dict[str, Any], request: GenerateRequest) -> Generation:
        generation = self.live._generation(body, request, {"seed": request.seed,
                                                           "temperature": request.temperature}, 0.0)
        cost = None if generation.cost is None else generation.cost * BATCH_DISCOUNT
        return generation.model_copy(update={"cost": cost})

    # -- submitting --------------------------------------------------------------------------

    async def aclose(self) -> None:
        try:
            if self._pending:
                await self.submit()
        finally:
            await self._client.aclose()
            await self.live.aclose()

    async def submit(self) -> str:
        """Submit every deferred request as one batch; returns its id."""
        requests = dict(self._pending)
        batch_id = await (self._submit_anthropic(requests) if self.provider == "anthropic"
                          else self._submit_openai(requests))
        carried = {key: request.model_dump(mode="json") for key, request in requests.items()}
        self.ledger.batches[batch_id] = {"provider": self.provider, "submitted_at": time.time(),
                                         "requests": carried}
        self.ledger.save()
        self._pending.clear()
        self.submitted += len(requests)
        self.batch_ids.append(batch_id)
        return batch_id

    async def _submit_openai(self, requests: dict[str, GenerateRequest]) -> str:
        # The endpoint's structured-output form and log-probabilities, found out once on the live
        # route (the same base URL serves both), as for live requests.
        capabilities = await self.live.capabilities()
        lines = []
        for key, request in requests.items():
            if request.messages is not None:
                url, body = "/v1/chat/completions", self.live._chat_body(request, capabilities)
            else:
                url, body = "/v1/completions", _completion_body(self.live.model, request)
            lines.append(json.dumps({"custom_id": key, "method": "POST", "url": url, "body": body}))
        content = ("\n".join(lines) + "\n").encode()
        uploaded = await self._json("POST", "/files", files={"file": ("batch.jsonl", content)},
                                    data={"purpose": "batch"})
        endpoint = "/v1/chat/completions" if all(r.messages is not None for r in requests.values()) \
            else "/v1/completions"
        created = await self._json("POST", "/batches", json={
            "input_file_id": uploaded["id"], "endpoint": endpoint,
            "completion_window": self.completion_window})
        return str(created["id"])

    async def _submit_anthropic(self, requests: dict[str, GenerateRequest]) -> str:
        entries = [{"custom_id": key, "params": messages_params(self.live.model, request)}
                   for key, request in requests.items()]
        created = await self._json("POST", "/messages/batches", json={"requests": entries})
        return str(created["id"])

    async def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = await self._call(method, path, **kwargs)
        try:
            data = response.json()
        except ValueError:
            raise ModelError(f"{self.name}: the batch API sent no JSON for {method} {path}") from None
        if not isinstance(data, dict):
            raise ModelError(f"{self.name}: the batch API sent {type(data).__name__} for {method} {path}")
        return data

    async def _text(self, path: str) -> str:
        return (await self._call("GET", path)).text

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = await self._client.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise ModelError(f"{self.name}: the batch API at {self.base_url} failed: {error}") from None
        if response.status_code >= 400:
            raise ModelError(f"{self.name}: the batch API answered HTTP {response.status_code} to "
                             f"{method} {path}: {response.text[:200]}")
        return response


def _problem(row: dict[str, Any]) -> str:
    response = row.get("response") or {}
    detail = row.get("error") or (response.get("body") or {}).get("error") or response.get("body")
    return f"HTTP {response.get('status_code')}: {json.dumps(detail)[:200]}"


def _completion_body(model: str, request: GenerateRequest) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "prompt": request.prompt, "max_tokens": request.max_tokens,
                            "temperature": request.temperature, **request.sampling()}
    if request.next_token_candidates:
        body.update(max_tokens=1, logprobs=20, temperature=0.0)
    if request.seed is not None:
        body["seed"] = request.seed
    return body
