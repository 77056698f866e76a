"""Any OpenAI-compatible HTTP endpoint: OpenAI, vLLM, Ollama, llama.cpp's server, ...

Structured output is asked for in the most precise form the server accepts and degraded once,
per endpoint, when it refuses: ``json_schema`` -> ``json_object`` with the schema (llama.cpp) ->
no response format (the prompt still carries the schema, and the parser is tolerant). Token
log-probabilities are asked for too and dropped if the server rejects them.

Each endpoint has its own concurrency limit; transient failures (connection errors, timeouts,
429, 5xx) are retried with exponential backoff and jitter, honouring ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import re
import time
from typing import Any

import httpx

from convoscope.models._base import GenerateRequest, Generation, ModelError

_FORMATS = ("json_schema", "json_object_schema", "none")
_TRANSIENT = {408, 409, 425, 429, 500, 502, 503, 504}
_SCORE_KEY = re.compile(r'"score"\s*:\s*"?$')


class OpenAIModel:
    """A model behind an OpenAI-compatible ``/v1`` endpoint.

    ``price_per_million`` = (input, output) in your currency gives a cost per call; without it
    cost stays unknown rather than wrong.
    """

    def __init__(self, model: str, *, base_url: str = "https://api.openai.com/v1",
                 api_key: str | None = None, max_concurrency: int = 8, timeout_s: float = 120.0,
                 max_retries: int = 4, backoff_s: float = 1.0,
                 price_per_million: tuple[float, float] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        key = api_key or os.environ.get("CONVOSCOPE_API_KEY") or os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.AsyncClient(base_url=self.base_url, headers=headers,
                                         timeout=httpx.Timeout(timeout_s), transport=transport)
        self._limit = asyncio.Semaphore(max_concurrency)
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        self._price = price_per_million
        self._format_index = 0  # how far structured output had to be degraded for this server
        self._logprobs_ok = True
        self._settled = False
        self._probe_lock = asyncio.Lock()

    @property
    def name(self) -> str:
        return f"openai:{self.model}@{self.base_url}"

    async def generate(self, request: GenerateRequest) -> Generation:
        async with self._limit:
            started = time.perf_counter()
            if request.messages is not None:
                data = await self._chat(request)
            else:
                data = await self._completion(request)
            return self._generation(data, request, time.perf_counter() - started)

    async def _chat(self, request: GenerateRequest) -> dict[str, Any]:
        if self._settled:
            return await self._chat_attempts(request)
        # Until one request has succeeded, probe the server's capabilities one request at a time,
        # so that a burst of concurrent requests does not pay for every rejected form.
        async with self._probe_lock:
            if self._settled:
                return await self._chat_attempts(request)
            data = await self._chat_attempts(request)
            self._settled = True
            return data

    async def _chat_attempts(self, request: GenerateRequest) -> dict[str, Any]:
        while True:
            body: dict[str, Any] = {
                "model": self.model, "messages": [m.model_dump() for m in request.messages or ()],
                "max_tokens": request.max_tokens, "temperature": request.temperature,
                **request.sampling()}
            if request.seed is not None:
                body["seed"] = request.seed
            if request.stop:
                body["stop"] = list(request.stop)
            state = (self._format_index, self._logprobs_ok)
            if self._logprobs_ok:
                body.update(logprobs=True, top_logprobs=10)
            fmt = _FORMATS[self._format_index] if request.json_schema is not None else "none"
            if fmt == "json_schema":
                body["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": "judgement", "schema": request.json_schema, "strict": False}}
            elif fmt == "json_object_schema":
                body["response_format"] = {"type": "json_object", "schema": request.json_schema}
            try:
                return await self._post("/chat/completions", body)
            except _Rejected as rejected:
                if state != (self._format_index, self._logprobs_ok):
                    continue  # a concurrent request already stepped down; retry in the new state
                if not self._degrade(rejected, fmt):
                    raise ModelError(f"{self.name}: {rejected}") from None

    def _degrade(self, rejected: _Rejected, fmt: str) -> bool:
        """Step down one capability after the server rejected a request. False: nothing left."""
        text = rejected.detail.lower()
        if self._logprobs_ok and "logprob" in text:
            self._logprobs_ok = False
            return True
        if fmt != "none" and self._format_index < len(_FORMATS) - 1:
            self._format_index += 1
            return True
        if self._logprobs_ok:
            self._logprobs_ok = False
            return True
        return False

    async def _completion(self, request: GenerateRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "prompt": request.prompt,
                                "max_tokens": request.max_tokens, "temperature": request.temperature,
                                **request.sampling()}
        if request.seed is not None:
            body["seed"] = request.seed
        if request.stop:
            body["stop"] = list(request.stop)
        if request.next_token_candidates:
            body.update(max_tokens=1, logprobs=20, temperature=0.0)
        try:
            data = await self._post("/completions", body)
            if request.next_token_candidates:
                data = await self._score_past_whitespace(body, data, request.next_token_candidates)
            return data
        except _Rejected as rejected:
            raise ModelError(f"{self.name}: {rejected}") from None

    async def _score_past_whitespace(self, body: dict[str, Any], data: dict[str, Any],
                                     candidates: tuple[str, ...]) -> dict[str, Any]:
        """BPE tokenizers often write " 3" as " " + "3", so the most likely next token after
        "Score:" is a bare space. Ask once more with that space appended and fold the second
        step in: P(" 3") = P(" ") * P("3" | prompt + " ")."""
        top = _top_logprobs(data)
        if not top:
            return data
        lead, lead_logprob = max(top.items(), key=lambda pair: pair[1])
        if lead.strip() or not lead:
            return data
        second = await self._post("/completions", {**body, "prompt": body["prompt"] + lead})
        folded = dict(top)
        for token, logprob in (_top_logprobs(second) or {}).items():
            word = lead + token
            if word in candidates or token in candidates:
                key = word if word in candidates else lead + token.strip()
                folded[key] = max(folded.get(key, -math.inf), lead_logprob + logprob)
        choice = dict(data["choices"][0])
        choice["logprobs"] = {**(choice.get("logprobs") or {}), "top_logprobs": [folded]}
        usage = {key: (data.get("usage") or {}).get(key, 0) + (second.get("usage") or {}).get(key, 0)
                 for key in ("prompt_tokens", "completion_tokens")}
        return {**data, "choices": [choice], "usage": usage}

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(self._max_retries + 1):
            try:
                response = await self._client.post(path, json=body)
            except (httpx.TransportError, httpx.TimeoutException) as error:
                if attempt == self._max_retries:
                    raise ModelError(f"{self.name}: {type(error).__name__}: {error}") from error
                await asyncio.sleep(self._delay(attempt, None))
                continue
            if response.status_code == 200:
                return response.json()
            detail = response.text[:500]
            if response.status_code in (400, 404, 422) or (
                    response.status_code == 500 and "response_format" in str(body) and attempt == 0):
                raise _Rejected(response.status_code, detail)
            if response.status_code in (401, 403):
                raise ModelError(f"{self.name}: not authorised (HTTP {response.status_code}); set "
                                 "CONVOSCOPE_API_KEY or OPENAI_API_KEY")
            if response.status_code not in _TRANSIENT or attempt == self._max_retries:
                raise ModelError(f"{self.name}: HTTP {response.status_code}: {detail}")
            await asyncio.sleep(self._delay(attempt, response.headers.get("retry-after")))
        raise AssertionError("unreachable")

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), 60.0)
            except ValueError:
                pass
        return self._backoff_s * (2 ** attempt) * (0.5 + random.random())

    def _generation(self, data: dict[str, Any], request: GenerateRequest, latency: float) -> Generation:
        try:
            choice = data["choices"][0]
        except (KeyError, IndexError, TypeError):
            raise ModelError(f"{self.name}: the response has no choices: {str(data)[:300]}") from None
        text = (choice.get("message") or {}).get("content") if "message" in choice else choice.get("text")
        usage = data.get("usage") or {}
        n_in, n_out = usage.get("prompt_tokens", 0) or 0, usage.get("completion_tokens", 0) or 0
        cost = None
        if self._price is not None:
            cost = (n_in * self._price[0] + n_out * self._price[1]) / 1_000_000
        if request.next_token_candidates:
            logprobs = _completion_top_logprobs(choice, request.next_token_candidates)
        else:
            logprobs = _score_token_logprobs(choice)
        return Generation(text=text or "", model=self.name, next_token_logprobs=logprobs,
                          prompt_tokens=n_in, completion_tokens=n_out, latency_s=latency,
                          finish_reason=choice.get("finish_reason"), cost=cost)

    async def aclose(self) -> None:
        await self._client.aclose()


class _Rejected(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.detail = detail


def _top_logprobs(data: dict[str, Any]) -> dict[str, float] | None:
    try:
        return _first_top(data["choices"][0])
    except (KeyError, IndexError, TypeError):
        return None


def _first_top(choice: dict[str, Any]) -> dict[str, float] | None:
    return ((choice.get("logprobs") or {}).get("top_logprobs") or [None])[0]


def _completion_top_logprobs(choice: dict[str, Any], candidates: tuple[str, ...]) -> dict[str, float] | None:
    top = _first_top(choice)
    if not top:
        return None
    wanted = set(candidates)
    return {token: float(logprob) for token, logprob in top.items() if token in wanted}


def _score_token_logprobs(choice: dict[str, Any]) -> dict[str, float] | None:
    """In a chat answer, the alternatives the model weighed for the first token of the score."""
    content = (choice.get("logprobs") or {}).get("content") or []
    written = ""
    for entry in content:
        if _SCORE_KEY.search(written) and entry.get("token", "").strip(' "'):
            alternatives = entry.get("top_logprobs") or []
            return {alt["token"]: float(alt["logprob"]) for alt in alternatives} or None
        written += entry.get("token", "")
    return None
