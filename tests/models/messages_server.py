"""A local server that speaks Anthropic's Messages API in front of an OpenAI-compatible server
(the real llama.cpp server in tests), for the ``anthropic:`` route: 127.0.0.1 only.

``POST /v1/messages`` checks what the real API checks first — the ``x-api-key`` and
``anthropic-version`` headers (401 / 400) and that the body holds only Messages API fields (400
``invalid_request_error``, as the API answers ``logprobs`` or ``seed``) — then asks the upstream
chat route: the system prompt as a system message, ``stop_sequences`` as ``stop``, and a forced
tool call as a JSON-schema grammar (llama.cpp's ``json_object`` with ``schema``), answered as a
``tool_use`` block. Every request body is kept in ``requests``.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from threaded_app import ThreadedApp

FIELDS = {"model", "max_tokens", "messages", "system", "temperature", "top_p", "top_k", "stop_sequences",
          "tools", "tool_choice", "metadata", "stream"}


def _error(status: int, kind: str, message: str) -> JSONResponse:
    return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status_code=status)


class MessagesServer:
    def __init__(self, upstream: str, *, key: str) -> None:
        self.upstream, self.key = upstream.rstrip("/"), key
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.app = Starlette(routes=[Route("/v1/messages", self._messages, methods=["POST"])])

    async def _messages(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if request.headers.get("x-api-key") != self.key:
            return _error(401, "authentication_error", "invalid x-api-key")
        if not request.headers.get("anthropic-version"):
            return _error(400, "invalid_request_error", "anthropic-version: header is required")
        extra = sorted(set(body) - FIELDS)
        if extra:
            return _error(400, "invalid_request_error", f"{extra[0]}: Extra inputs are not permitted")
        chat, tool = self._chat(body)
        async with httpx.AsyncClient(timeout=600) as client:
            answer = await client.post(self.upstream + "/chat/completions", json=chat)
        if answer.status_code != 200:
            return _error(answer.status_code, "api_error", answer.text[:500])
        return JSONResponse(self._message(body["model"], answer.json(), tool))

    @staticmethod
    def _chat(body: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        system = [{"role": "system", "content": body["system"]}] if body.get("system") else []
        chat: dict[str, Any] = {"model": body["model"], "messages": system + body["messages"],
                                "max_tokens": body["max_tokens"], "temperature": body.get("temperature", 1.0)}
        if body.get("stop_sequences"):
            chat["stop"] = body["stop_sequences"]
        forced = (body.get("tool_choice") or {}).get("name")
        tools = {tool["name"]: tool for tool in body.get("tools") or ()}
        if forced in tools:
            chat["response_format"] = {"type": "json_object", "schema": tools[forced]["input_schema"]}
        return chat, forced

    @staticmethod
    def _message(model: str, chat: dict[str, Any], tool: str | None) -> dict[str, Any]:
        choice = chat["choices"][0]
        text = choice["message"]["content"] or ""
        usage = chat.get("usage") or {}
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        stop = "max_tokens" if choice.get("finish_reason") == "length" else "end_turn"
        if tool is not None:
            try:
                content = [{"type": "tool_use", "id": "toolu_1", "name": tool, "input": json.loads(text)}]
                stop = "tool_use"
            except ValueError:
                pass  # the grammar ran out of tokens: the text as it came
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": content,
                "stop_reason": stop, "usage": {"input_tokens": usage.get("prompt_tokens", 0),
                                               "output_tokens": usage.get("completion_tokens", 0)}}

    def __enter__(self) -> MessagesServer:
        self._served = ThreadedApp(self.app)
        self.base_url = self._served.__enter__() + "/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        self._served.__exit__(*exc)
