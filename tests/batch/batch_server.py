"""A local server that implements the documented batch endpoints, for tests (127.0.0.1 only).

OpenAI Batch API: ``POST /v1/files`` (multipart, purpose=batch), ``DELETE /v1/files/{id}``,
``GET /v1/files/{id}/content``, ``POST /v1/batches`` (with ``metadata``), ``GET /v1/batches``,
``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``. Each line of a batch is answered by the
``upstream`` OpenAI-compatible server (the real llama.cpp server in tests); its errors go to the
error file. A batch is validated as the provider documents: every line's ``url`` must be the
batch's ``endpoint``, and the file may hold at most ``max_requests`` lines and ``max_bytes`` bytes
(OpenAI: 50,000 and 200 MB); a batch that breaks a rule ends ``failed`` with ``errors``.
Anthropic Message Batches: ``POST /v1/messages/batches`` (at most ``max_requests`` requests),
``GET /v1/messages/batches/{id}``, ``GET …/{id}/results`` (JSONL), ``POST …/{id}/cancel``,
``DELETE /v1/messages/batches/{id}`` (once ended).

Scripting: ``fail_ids`` (custom ids answered with an error), ``expire_next`` (the next batch
expires unprocessed), ``hold`` (batches stay in progress until released), ``refuse_delete``
(file deletions fail). ``submitted`` records
every batch created: (id, endpoint, custom ids).
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from typing import Any

import httpx
import uvicorn
from patience import PATIENT_S
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

OPENAI_MAX_REQUESTS, OPENAI_MAX_BYTES = 50_000, 200_000_000


class BatchServer:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.submitted: list[tuple[str, str, list[str]]] = []
        self.fail_ids: set[str] = set()
        self.expire_next = False
        self.hold = False
        self.refuse_delete = False
        self.uploads = 0
        self.max_requests, self.max_bytes = OPENAI_MAX_REQUESTS, OPENAI_MAX_BYTES
        self._ids = itertools.count(1)
        self._server: uvicorn.Server | None = None
        routes = [
            Route("/v1/files", self._upload, methods=["POST"]),
            Route("/v1/files/{file_id}", self._delete_file, methods=["DELETE"]),
            Route("/v1/files/{file_id}/content", self._content, methods=["GET"]),
            Route("/v1/batches", self._create, methods=["POST"]),
            Route("/v1/batches", self._list, methods=["GET"]),
            Route("/v1/batches/{batch_id}", self._retrieve, methods=["GET"]),
            Route("/v1/batches/{batch_id}/cancel", self._cancel, methods=["POST"]),
            Route("/v1/chat/completions", self._live, methods=["POST"]),
            Route("/v1/messages/batches", self._create_anthropic, methods=["POST"]),
            Route("/v1/messages/batches/{batch_id}", self._retrieve_anthropic, methods=["GET"]),
            Route("/v1/messages/batches/{batch_id}", self._delete_anthropic, methods=["DELETE"]),
            Route("/v1/messages/batches/{batch_id}/cancel", self._cancel_anthropic, methods=["POST"]),
            Route("/v1/messages/batches/{batch_id}/results", self._results_anthropic, methods=["GET"]),
        ]
        self.app = Starlette(routes=routes)

    # -- OpenAI ---------------------------------------------------------------------------------

    async def _live(self, request: Request) -> JSONResponse:
        """The live route at the same base URL (capability probes use it), passed upstream."""
        async with httpx.AsyncClient(timeout=PATIENT_S) as client:
            answer = await client.post(self.upstream + "/chat/completions", json=await request.json())
        return JSONResponse(answer.json(), status_code=answer.status_code)

    async def _upload(self, request: Request) -> JSONResponse:
        form = await request.form()
        if form.get("purpose") != "batch":
            return JSONResponse({"error": {"message": "purpose must be batch"}}, status_code=400)
        upload = form["file"]
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = await upload.read()  # type: ignore[union-attr]
        self.uploads += 1
        return JSONResponse({"id": file_id, "object": "file", "purpose": "batch",
                             "bytes": len(self.files[file_id])})

    async def _delete_file(self, request: Request) -> JSONResponse:
        file_id = request.path_params["file_id"]
        if self.refuse_delete:
            return JSONResponse({"error": {"message": "scripted failure"}}, status_code=500)
        if self.files.pop(file_id, None) is None:
            return JSONResponse({"error": {"message": "no such file"}}, status_code=404)
        return JSONResponse({"id": file_id, "object": "file", "deleted": True})

    async def _content(self, request: Request) -> PlainTextResponse:
        file_id = request.path_params["file_id"]
        if file_id not in self.files:
            return PlainTextResponse("no such file", status_code=404)
        return PlainTextResponse(self.files[file_id].decode())

    async def _create(self, request: Request) -> JSONResponse:
        body = await request.json()
        if body.get("input_file_id") not in self.files:
            return JSONResponse({"error": {"message": "unknown input_file_id"}}, status_code=400)
        if body.get("completion_window") != "24h":
            return JSONResponse({"error": {"message": "completion_window must be 24h"}}, status_code=400)
        batch_id = f"batch_{next(self._ids)}"
        content = self.files[body["input_file_id"]]
        lines = [json.loads(line) for line in content.decode().splitlines() if line]
        expired, self.expire_next = self.expire_next, False
        self.submitted.append((batch_id, body["endpoint"], [line["custom_id"] for line in lines]))
        self.batches[batch_id] = {
            "id": batch_id, "object": "batch", "endpoint": body["endpoint"], "status": "in_progress",
            "input_file_id": body["input_file_id"], "metadata": body.get("metadata"), "lines": lines,
            "expired": expired, "cancel": False, "created_at": int(time.time()),
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
        problem = self._invalid(body["endpoint"], lines, len(content))
        if problem:  # validation fails the batch, as the provider does
            self.batches[batch_id].update(status="failed", errors={"object": "list", "data": [
                {"code": "invalid_batch", "message": problem}]})
        else:
            threading.Thread(target=self._process, args=(batch_id,), daemon=True).start()
        return JSONResponse(self._public(batch_id))

    def _invalid(self, endpoint: str, lines: list[dict[str, Any]], size: int) -> str | None:
        if any(line["url"] != endpoint for line in lines):
            return f"every request must use the batch's endpoint {endpoint}"
        if len(lines) > self.max_requests:
            return f"{len(lines)} requests; at most {self.max_requests}"
        if size > self.max_bytes:
            return f"{size} bytes; at most {self.max_bytes}"
        return None

    def _process(self, batch_id: str) -> None:
        batch = self.batches[batch_id]
        while self.hold and not batch["cancel"]:
            time.sleep(0.05)
        if batch["expired"]:
            batch["status"] = "expired"
            return
        output, errors = [], []
        with httpx.Client(timeout=PATIENT_S) as client:
            for line in batch["lines"]:
                if batch["cancel"]:
                    break
                custom_id = line["custom_id"]
                if custom_id in self.fail_ids:
                    errors.append({"custom_id": custom_id, "response": {"status_code": 500, "body": {
                        "error": {"message": "scripted failure"}}}, "error": None})
                    continue
                path = line["url"].removeprefix("/v1")
                answer = client.post(self.upstream + path, json=line["body"])
                row = {"custom_id": custom_id, "response": {"status_code": answer.status_code,
                                                            "body": answer.json()}, "error": None}
                (output if answer.status_code == 200 else errors).append(row)
        batch["request_counts"].update(completed=len(output), failed=len(errors))
        batch["output_file_id"] = self._store_file(output)
        batch["error_file_id"] = self._store_file(errors) if errors else None
        batch["status"] = "cancelled" if batch["cancel"] else "completed"

    def _store_file(self, rows: list[dict[str, Any]]) -> str:
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = "".join(json.dumps(row) + "\n" for row in rows).encode()
        return file_id

    def _public(self, batch_id: str) -> dict[str, Any]:
        hidden = ("lines", "expired", "cancel")
        return {key: value for key, value in self.batches[batch_id].items() if key not in hidden}

    async def _retrieve(self, request: Request) -> JSONResponse:
        batch_id = request.path_params["batch_id"]
        if batch_id not in self.batches:
            return JSONResponse({"error": {"message": "no such batch"}}, status_code=404)
        return JSONResponse(self._public(batch_id))

    async def _list(self, request: Request) -> JSONResponse:
        ids = [key for key in self.batches if key.startswith("batch_")]
        return JSONResponse({"object": "list", "data": [self._public(key) for key in reversed(ids)],
                             "has_more": False})

    async def _cancel(self, request: Request) -> JSONResponse:
        batch = self.batches.get(request.path_params["batch_id"])
        if batch is None:
            return JSONResponse({"error": {"message": "no such batch"}}, status_code=404)
        if batch["status"] in ("validating", "in_progress"):
            batch.update(cancel=True, status="cancelling")
        return JSONResponse(self._public(batch["id"]))

    # -- Anthropic ------------------------------------------------------------------------------

    async def _create_anthropic(self, request: Request) -> JSONResponse:
        body = await request.json()
        if len(body["requests"]) > self.max_requests:
            return JSONResponse({"type": "error", "error": {
                "type": "invalid_request_error", "message": "too many requests"}}, status_code=400)
        batch_id = f"msgbatch_{next(self._ids)}"
        self.submitted.append((batch_id, "/v1/messages", [entry["custom_id"] for entry in body["requests"]]))
        self.batches[batch_id] = {"id": batch_id, "processing_status": "in_progress",
                                  "requests": body["requests"], "results": [], "cancel": False}
        threading.Thread(target=self._process_anthropic, args=(batch_id,), daemon=True).start()
        return JSONResponse({"id": batch_id, "type": "message_batch", "processing_status": "in_progress"})

    def _process_anthropic(self, batch_id: str) -> None:
        batch = self.batches[batch_id]
        while self.hold and not batch["cancel"]:
            time.sleep(0.05)
        with httpx.Client(timeout=PATIENT_S) as client:
            for entry in batch["requests"]:
                if batch["cancel"]:
                    batch["results"].append({"custom_id": entry["custom_id"], "result": {"type": "canceled"}})
                elif entry["custom_id"] in self.fail_ids:
                    batch["results"].append({"custom_id": entry["custom_id"], "result": {
                        "type": "errored", "error": {"type": "api_error", "message": "scripted"}}})
                else:
                    batch["results"].append(self._answer_anthropic(client, entry))
        batch["processing_status"] = "ended"

    def _answer_anthropic(self, client: httpx.Client, entry: dict[str, Any]) -> dict[str, Any]:
        params = entry["params"]
        messages = ([{"role": "system", "content": params["system"]}] if params.get("system") else [])
        chat = client.post(self.upstream + "/chat/completions", json={
            "model": params["model"], "messages": messages + params["messages"],
            "max_tokens": params["max_tokens"], "temperature": params.get("temperature", 0)}).json()
        usage = chat.get("usage") or {}
        message = {"model": params["model"], "stop_reason": "end_turn",
                   "content": [{"type": "text", "text": chat["choices"][0]["message"]["content"]}],
                   "usage": {"input_tokens": usage.get("prompt_tokens", 0),
                             "output_tokens": usage.get("completion_tokens", 0)}}
        return {"custom_id": entry["custom_id"], "result": {"type": "succeeded", "message": message}}

    async def _retrieve_anthropic(self, request: Request) -> JSONResponse:
        batch = self.batches.get(request.path_params["batch_id"])
        if batch is None:
            return JSONResponse({"type": "error", "error": {"type": "not_found_error"}}, status_code=404)
        ended = batch["processing_status"] == "ended"
        return JSONResponse({"id": batch["id"], "processing_status": batch["processing_status"],
                             "results_url": f"{self.base_url}/messages/batches/{batch['id']}/results"
                             if ended else None})

    async def _cancel_anthropic(self, request: Request) -> JSONResponse:
        batch = self.batches.get(request.path_params["batch_id"])
        if batch is None:
            return JSONResponse({"type": "error", "error": {"type": "not_found_error"}}, status_code=404)
        if batch["processing_status"] == "in_progress":
            batch.update(cancel=True, processing_status="canceling")
        return JSONResponse({"id": batch["id"], "processing_status": batch["processing_status"]})

    async def _delete_anthropic(self, request: Request) -> JSONResponse:
        batch = self.batches.get(request.path_params["batch_id"])
        if batch is None or batch["processing_status"] != "ended":
            return JSONResponse({"type": "error", "error": {"type": "invalid_request_error"}},
                                status_code=400)
        del self.batches[batch["id"]]
        return JSONResponse({"id": batch["id"], "type": "message_batch_deleted"})

    async def _results_anthropic(self, request: Request) -> PlainTextResponse:
        batch = self.batches[request.path_params["batch_id"]]
        return PlainTextResponse("".join(json.dumps(row) + "\n" for row in batch["results"]))

    # -- lifecycle ------------------------------------------------------------------------------

    def submitted_ids(self) -> list[str]:
        """Every custom id sent in any batch, repeats included (a repeat is a request paid twice)."""
        return [custom_id for _, _, ids in self.submitted for custom_id in ids]

    def wait_idle(self, timeout: float = PATIENT_S) -> None:
        """Until every batch has finished processing (as long as a loaded machine may need: the
        upstream is a real model; the timeout only stops a test that hangs for good)."""
        deadline = time.monotonic() + timeout
        running = ("in_progress", "cancelling", "canceling")
        while any(b.get("status") in running or b.get("processing_status") in running
                  for b in self.batches.values()):
            if time.monotonic() > deadline:
                raise TimeoutError("batches still processing")
            time.sleep(0.05)

    def __enter__(self) -> BatchServer:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                                     log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        while not self._server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        for batch in self.batches.values():
            batch["cancel"] = True  # a held batch's thread stops instead of waiting forever
        self._server.should_exit = True
        self._thread.join(timeout=10)
