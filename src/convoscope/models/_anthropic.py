"""Anthropic's Messages API, natively: ``anthropic:MODEL[@BASE_URL]`` (base URL default
``https://api.anthropic.com/v1``; key from ``ANTHROPIC_API_KEY`` for that host, or ``api_key_env``).

The model is the OpenAI-compatible backend with a translating transport underneath: each chat
request is rewritten into a Messages API request (system message apart, ``stop`` as
``stop_sequences``, a JSON schema as a forced tool call, the key in ``x-api-key``) and each answer
back into a chat completion. So retries, in-flight limits, per-minute budgets, the capability
probe, the response cache and the batch API (``--batch anthropic``) are the same code as for
every other HTTP judge, and nothing beyond httpx is installed. What the Messages API does not
have is refused by the transport itself, before any network: log-probabilities (the probe records
them as not taken), raw completions (judge in chat mode), and a seed (not sent).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from convoscope.models._base import GenerateRequest, ModelError
from convoscope.models._openai import OpenAIModel

ANTHROPIC_URL = "https://api.anthropic.com/v1"
ANTHROPIC_VERSION = "2023-06-01"
TOOL = "judgement"
_UNSUPPORTED = {"logprobs": "log-probabilities", "top_logprobs": "log-probabilities"}


class AnthropicModel(OpenAIModel):
    """A model behind the Messages API (options as for :class:`OpenAIModel`)."""

    def __init__(self, model: str, *, base_url: str = ANTHROPIC_URL,
                 transport: httpx.AsyncBaseTransport | None = None, **options: Any) -> None:
        super().__init__(model, base_url=base_url, transport=MessagesTransport(transport), **options)

    @property
    def name(self) -> str:
        return f"anthropic:{self.model}@{self.base_url}"

    @property
    def provider(self) -> str:
        return "anthropic"


class MessagesTransport(httpx.AsyncBaseTransport):
    """Speaks the Messages API to the network and chat completions to the client above it."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method != "POST" or not path.endswith("/completions"):
            return _error(404, "not_found_error", f"the Messages API has no {request.method} {path}")
        if not path.endswith("/chat/completions"):
            return _error(400, "invalid_request_error", "the Messages API has no raw completions: "
                          "judge in chat mode (--mode chat)")
        body = json.loads(request.content)
        refused = sorted({_UNSUPPORTED[key] for key in body if key in _UNSUPPORTED})
        if refused or (body.get("response_format") or {}).get("type", "json_schema") != "json_schema":
            what = ", ".join(refused) or "response_format json_object (a schema goes as a tool)"
            return _error(400, "invalid_request_error", f"not supported by the Messages API: {what}")
        headers = {key: value for key, value in request.headers.items()
                   if key.lower() not in ("authorization", "content-length", "host")}
        key = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        headers.update({"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION})
        url = request.url.copy_with(path=path.removesuffix("/chat/completions") + "/messages")
        sent = httpx.Request("POST", url, headers=headers, json=messages_body(body),
                             extensions=request.extensions)
        response = await self.inner.handle_async_request(sent)
        content = await response.aread()
        if response.status_code != 200:  # the status and the retry hints pass through as they came
            kept = {key: value for key, value in response.headers.items()
                    if key.lower() in ("content-type", "retry-after", "retry-after-ms", "x-should-retry")}
            return httpx.Response(response.status_code, headers=kept, content=content)
        try:
            answer = chat_completion(json.loads(content))
        except (ValueError, TypeError, AttributeError):
            return httpx.Response(200, content=content)  # the client names what is wrong with it
        return httpx.Response(200, json=answer)

    async def aclose(self) -> None:
        await self.inner.aclose()


def messages_body(chat: dict[str, Any]) -> dict[str, Any]:
    """A Messages API request from a chat-completions body (see the module docstring)."""
    messages = chat.get("messages") or []
    system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
    body: dict[str, Any] = {"model": chat["model"], "max_tokens": chat.get("max_tokens") or 1024,
                            "messages": [m for m in messages if m.get("role") != "system"]}
    for key in ("temperature", "top_p"):
        if chat.get(key) is not None:
            body[key] = chat[key]
    if system:
        body["system"] = system
    if chat.get("stop"):
        body["stop_sequences"] = list(chat["stop"])
    schema = ((chat.get("response_format") or {}).get("json_schema") or {}).get("schema")
    if schema is not None:
        body["tools"] = [{"name": TOOL, "description": "Record the judgement.", "input_schema": schema}]
        body["tool_choice"] = {"type": "tool", "name": TOOL}
    return body


def messages_params(model: str, request: GenerateRequest) -> dict[str, Any]:
    """A Messages API request for a chat :class:`GenerateRequest` (the batch API's ``params``);
    the JSON schema stays in the prompt."""
    if request.messages is None:
        raise ModelError("Anthropic's Messages API takes chat requests only; use chat mode for this judge")
    return messages_body({"model": model, "messages": [m.model_dump() for m in request.messages],
                          "max_tokens": request.max_tokens, "temperature": request.temperature,
                          "top_p": request.top_p, "stop": list(request.stop)})


def chat_completion(message: dict[str, Any]) -> dict[str, Any]:
    """A Messages API answer in the chat-completions shape: the text, or a forced tool call's
    input as JSON text; usage and the served model carried over."""
    blocks = message.get("content") or []
    called = [block for block in blocks if block.get("type") == "tool_use"]
    text = json.dumps(called[0].get("input"), ensure_ascii=False) if called else "".join(
        block.get("text", "") for block in blocks if block.get("type") == "text")
    usage = message.get("usage") or {}
    choice = {"index": 0, "finish_reason": message.get("stop_reason"),
              "message": {"role": "assistant", "content": text}}
    return {"model": message.get("model"), "choices": [choice],
            "usage": {"prompt_tokens": usage.get("input_tokens", 0),
                      "completion_tokens": usage.get("output_tokens", 0)}}


def _error(status: int, kind: str, message: str) -> httpx.Response:
    return httpx.Response(status, json={"type": "error", "error": {"type": kind, "message": message}})
