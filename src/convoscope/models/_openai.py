"""Any OpenAI-compatible HTTP endpoint: OpenAI, vLLM, Ollama, llama.cpp's server, ...

What the endpoint accepts is found out once, on dedicated probe requests, before the first chat
request (:mod:`._capabilities`): structured output in the most precise form it takes and token
log-probabilities. A probe that fails for a transient reason decides nothing and is asked again on
the next request; one item's failure (a 500, an over-long prompt) never changes what later items
are sent.

Each call: an in-flight slot of the endpoint's adaptive limit (:mod:`._limits`), the optional
per-minute budgets, then attempts within a :class:`~._retry.RetryPolicy` (per-attempt ``timeout``,
overall ``deadline``, ``max_retries``). Whatever fails for good is a :class:`ModelError` naming the
endpoint and what came back: the judge records it as that item's ``model_error``.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

from convoscope.models._base import EndpointUnreachable, GenerateRequest, Generation, ModelError
from convoscope.models._capabilities import (
    PROBE_MESSAGES,
    Capabilities,
    CapabilityProbe,
    Refused,
    Unavailable,
    refuses,
    response_format,
    structured_form,
)
from convoscope.models._http import (
    CoreSender,
    HttpxSender,
    SendFailed,
    SendTimeout,
    encode,
    proxied,
    tls_context,
)
from convoscope.models._keys import redact_url, resolve_api_key
from convoscope.models._limits import AdaptiveLimit, RateBudget, estimated_tokens
from convoscope.models._retry import (
    DeadlineClock,
    RetryPolicy,
    TransientError,
    call_with_retries,
    retry_after_seconds,
    should_retry,
)
from convoscope.models._wire import (
    Kind,
    body_problem,
    completion_top_logprobs,
    context_overflow,
    fold_past_whitespace,
    score_token_logprobs,
    snippet,
    usage_count,
    whitespace_lead,
)

if TYPE_CHECKING:
    import httpx


class OpenAIModel:
    """A model behind an OpenAI-compatible ``/v1`` endpoint.

    ``max_concurrency``: most requests in flight to this endpoint (None: as many as the run
    sends); ``rpm`` / ``tpm``: per-minute budgets; ``timeout`` per attempt and ``deadline`` per
    call, in seconds; ``context_length``: the server's context in tokens when it does not say;
    ``api_key`` / ``api_key_env`` / ``allow_insecure``: see :mod:`._keys`;
    ``price_per_million`` = (input, output) gives a cost per call (without it cost stays unknown).
    """

    def __init__(self, model: str, *, base_url: str = "https://api.openai.com/v1",
                 api_key: str | None = None, api_key_env: Any = None, allow_insecure: bool = False,
                 max_concurrency: int | None = None, rpm: float | None = None, tpm: float | None = None,
                 timeout: float = 60.0, deadline: float = 180.0, max_retries: int = 3,
                 backoff_s: float = 0.5, context_length: int | None = None,
                 price_per_million: tuple[float, float] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._name = f"openai:{model}@{redact_url(self.base_url)}"  # never the URL's credentials
        key = resolve_api_key(self.base_url, api_key=api_key, api_key_env=api_key_env,
                              allow_insecure=allow_insecure)
        try:
            self._policy = RetryPolicy(timeout=timeout, deadline=deadline, max_retries=max_retries,
                                       backoff_s=backoff_s)
            # Slow start from one request, and an answer slower than a quarter of the timeout counts
            # as congestion: a one-slot server's queue then stays short of the timeout (_limits).
            self._limit = AdaptiveLimit(max_concurrency, start=1, slow_s=timeout / 4)
            self._budget = RateBudget(rpm, tpm)
        except ValueError as error:
            raise ModelError(f"{self.name}: {error}") from None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        tls = tls_context(self.base_url)  # one for every pool (see ._http)
        self._sender: CoreSender | HttpxSender
        if transport is None and not proxied(self.base_url):
            self._sender = CoreSender(self.base_url, headers, timeout=timeout, tls=tls)
        else:
            self._sender = HttpxSender(self.base_url, headers, timeout=timeout, tls=tls, transport=transport)
        self._price = price_per_million
        self._context_length = context_length
        self._token_counter: str | None = None  # the tokenizer route; "" once known to be absent
        self._discovered = False
        self.probe = CapabilityProbe(self.name, self._probe_request)
        self._probe_lock = asyncio.Lock()  # discovery of the context size and tokenizer route

    @property
    def name(self) -> str:
        return self._name

    @property
    def in_flight_limit(self) -> AdaptiveLimit:
        """The endpoint's adaptive in-flight limit (read it to see how the endpoint kept up)."""
        return self._limit

    async def generate(self, request: GenerateRequest) -> Generation:
        started = time.perf_counter()
        await self._discover()
        await self._refuse_over_long(request)
        if request.messages is not None:
            capabilities = await self.probe.get()
            body = self._chat_body(request, capabilities)
            data = await self._request("/chat/completions", body, "chat",
                                       chat_content(body, request, capabilities))
        else:
            body, data = await self._completion(request)
        return self._generation(data, request, body, time.perf_counter() - started)

    @property
    def provider(self) -> str:
        """The API this backend speaks (``gen_ai.system`` in traces)."""
        return "openai"

    @property
    def capability_note(self) -> str | None:
        """Why this endpoint went without structured output, when it did (for the run summary)."""
        return self.probe.note

    @property
    def route(self) -> str:
        """How calls are sent (for the run summary): convoscope's own HTTP client."""
        return f"native {self.provider} ({type(self._sender).__name__.removesuffix('Sender').lower()})"

    # -- one call ---------------------------------------------------------------------------

    async def _send(self, path: str, body: dict[str, Any], kind: Kind, policy: RetryPolicy,
                    probing: str | None = None, content: bytes | None = None) -> dict[str, Any]:
        """Attempts within ``policy``; raises TransientError / TimeoutError / _Refused at the end."""
        text = body.get("prompt") if "prompt" in body else body.get("messages")
        tokens = 0
        if self._budget.counts_tokens:
            size = len(json.dumps(text, ensure_ascii=False).encode())
            tokens = estimated_tokens(size, body.get("max_tokens", 0))

        async def attempt(clock: DeadlineClock) -> dict[str, Any]:
            clock.stop()  # queueing behind our own limits is not the endpoint's time (retries too)
            await self._budget.spend(tokens)
            async with self._limit.slot() as sent_at:
                clock.start()
                return await self._attempt(path, body, kind, sent_at, probing, content)

        return await call_with_retries(attempt, policy, clock_starts_in_attempt=True)

    async def _attempt(self, path: str, body: dict[str, Any], kind: Kind, sent_at: float,
                       probing: str | None, content: bytes | None = None) -> dict[str, Any]:
        try:
            reply = await self._sender.post(path, body, content)
        except SendTimeout as error:
            # A server too slow to answer in time is congested, as one that says 429: fewer
            # requests at once (a llama.cpp server keeps computing the abandoned ones).
            self._limit.throttled(sent_at)
            raise TransientError(f"no answer within the timeout of {self._policy.timeout:g} s "
                                 f"({error})") from None
        except SendFailed as error:  # connection refused or dropped, broken encoding, ...
            raise TransientError(str(error), no_connection=error.no_connection) from None
        status = reply.status
        if status == 200:
            data, problem = body_problem(reply.content, kind)
            if problem is not None:
                raise TransientError(f"HTTP 200 with {problem}: {snippet(reply.text)}", status=200)
            if probing is None:  # a probe's tiny answer says nothing of how fast items are served
                self._limit.succeeded(sent_at)
            return data  # type: ignore[return-value]
        if status == 429:
            self._limit.throttled(sent_at)
        if status == 500 and refuses(status, reply.text, probing or ""):
            raise _Refused(status, reply.text)  # a validation error: no attempt would change it
        if should_retry(status, reply.headers):
            raise TransientError(f"HTTP {status}: {snippet(reply.text)}", status=status,
                                 retry_after=retry_after_seconds(reply.headers))
        raise _Refused(status, reply.text)

    async def _request(self, path: str, body: dict[str, Any], kind: Kind,
                       content: bytes | None = None) -> dict[str, Any]:
        """One call within the policy; every failure becomes a ModelError naming the endpoint.
        ``content``: ``body`` already encoded (a chat body cut from the request's serialisation)."""
        try:
            return await self._send(path, body, kind, self._policy, content=content)
        except TransientError as error:
            if error.no_connection:
                raise self._unreachable(error) from None
            raise ModelError(f"{self.name}: {error} (gave up after {self._policy.max_retries + 1} "
                             "attempts or the deadline)") from None
        except TimeoutError:
            raise ModelError(f"{self.name}: no answer within the deadline of {self._policy.deadline:g} s "
                             "per call") from None
        except _Refused as refused:
            raise self._refusal_error(refused) from None

    def _unreachable(self, error: TransientError) -> EndpointUnreachable:
        return EndpointUnreachable(f"{self.name}: cannot connect ({error}) after "
                                   f"{self._policy.max_retries + 1} attempts; is the server running?")

    def _refusal_error(self, refused: _Refused) -> ModelError:
        if refused.status in (401, 403):
            return EndpointUnreachable(f"{self.name}: not authorised (HTTP {refused.status}); name the "
                                       "variable holding this endpoint's key with --api-key-env VAR "
                                       "(option api_key_env)")
        overflow = context_overflow(refused.detail)
        if overflow is not None:
            tokens, context = overflow
            self._context_length = self._context_length or context  # later items are checked first
            size = f"of {tokens} tokens " if tokens else ""
            return ModelError(f"{self.name}: prompt {size}exceeds the context of {context}")
        return ModelError(f"{self.name}: HTTP {refused.status}: {snippet(refused.detail)}")

    # -- what the endpoint takes, found out once (see ._capabilities) ---------------------------

    async def capabilities(self) -> Capabilities:
        """What the endpoint takes (probed on the first call; raises ModelError while unknown)."""
        return await self.probe.get()

    async def _probe_request(self, extra: dict[str, Any]) -> None:
        body = {"model": self.model, "messages": list(PROBE_MESSAGES), "max_tokens": 8, "temperature": 0.0,
                **extra}
        field = "response_format" if "response_format" in extra else "logprob" if extra else None
        try:
            await self._send("/chat/completions", body, "chat", self._policy, probing=field or "")
        except _Refused as refused:
            if refused.status in (401, 403) or not refuses(refused.status, refused.detail, field or ""):
                raise self._refusal_error(refused) from None
            raise Refused(refused.status, refused.detail) from None
        except TransientError as error:
            if error.no_connection:  # no probe can be made, and no request either
                raise self._unreachable(error) from None
            raise Unavailable(str(error), status=error.status) from None
        except TimeoutError:
            raise Unavailable(f"no answer within the deadline of {self._policy.deadline:g} s") from None

    async def _discover(self) -> None:
        """Once: the context size (llama.cpp's /props) and a tokenizer route, when the server has them."""
        if self._discovered:
            return
        async with self._probe_lock:
            if self._discovered:
                return
            root = self.base_url.removesuffix("/v1")
            if self._context_length is None:
                self._context_length = _context_from_props(await self._quiet("GET", f"{root}/props"))
            self._discovered = True

    async def _counter(self) -> str | None:
        """The server's tokenizer route (llama.cpp: /tokenize; llama-cpp-python: /extras/...)."""
        if self._token_counter is None:
            async with self._probe_lock:
                if self._token_counter is None:
                    root = self.base_url.removesuffix("/v1")
                    self._token_counter = ""
                    for route in (f"{root}/tokenize", f"{root}/extras/tokenize/count"):
                        if await self._count_with(route, "a") is not None:
                            self._token_counter = route
                            break
        return self._token_counter or None

    async def _quiet(self, method: str, url: str, body: Any = None) -> dict[str, Any] | None:
        """A best-effort side request: any failure means 'the server does not have this'."""
        try:
            reply = await self._sender.side(method, url, body, timeout=min(10.0, self._policy.timeout))
            data = json.loads(reply.content) if reply.status == 200 else None
        except (SendTimeout, SendFailed, ValueError):
            return None
        return data if isinstance(data, dict) else None

    async def _count_with(self, route: str, text: str) -> int | None:
        data = await self._quiet("POST", route, {"content": text, "input": text, "model": self.model})
        if data is None:
            return None
        if isinstance(data.get("tokens"), list):
            return len(data["tokens"])
        return data["count"] if isinstance(data.get("count"), int) else None

    async def _refuse_over_long(self, request: GenerateRequest) -> None:
        """An over-long prompt is this item's ModelError, found before the call when the server's
        tokenizer can tell. A token covers at least one byte, so short prompts are never counted."""
        context = self._context_length
        if context is None:
            return
        texts = ([request.prompt] if request.prompt is not None
                 else [message.content for message in request.messages or ()])
        if sum(len(text.encode()) for text in texts) + 32 * len(texts) + 64 < context:
            return
        counter = await self._counter()
        if counter is None:
            return  # cannot count: the server will say so, and that stays this item's error
        tokens = await self._count_with(counter, "\n".join(texts))
        if tokens is not None and tokens >= context:
            raise ModelError(f"{self.name}: prompt of {tokens} tokens exceeds the context of {context}")

    # -- bodies and answers ---------------------------------------------------------------------

    def _chat_body(self, request: GenerateRequest, capabilities: Capabilities) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages or ()],
            "max_tokens": request.max_tokens, "temperature": request.temperature, **request.sampling()}
        if request.seed is not None:
            body["seed"] = request.seed
        if request.stop:
            body["stop"] = list(request.stop)
        if capabilities.logprobs:
            body.update(logprobs=True, top_logprobs=10)
        if request.json_schema is not None and capabilities.structured != "none":
            body["response_format"] = response_format(capabilities.structured, request.json_schema)
        return body

    async def _completion(self, request: GenerateRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        body: dict[str, Any] = {"model": self.model, "prompt": request.prompt,
                                "max_tokens": request.max_tokens, "temperature": request.temperature,
                                **request.sampling()}
        if request.seed is not None:
            body["seed"] = request.seed
        if request.stop:
            body["stop"] = list(request.stop)
        if request.next_token_candidates:
            body.update(max_tokens=1, logprobs=20, temperature=0.0)
        data = await self._request("/completions", body, "completion")
        if request.next_token_candidates:
            data = await self._score_past_whitespace(body, data, request.next_token_candidates)
        return body, data

    async def _score_past_whitespace(self, body: dict[str, Any], data: dict[str, Any],
                                     candidates: tuple[str, ...]) -> dict[str, Any]:
        """When the likeliest next token is a bare space, ask once more past it and fold."""
        lead = whitespace_lead(data)
        if lead is None:
            return data
        second = await self._request("/completions", {**body, "prompt": body["prompt"] + lead[0]},
                                     "completion")
        return fold_past_whitespace(data, second, lead, candidates)

    def _generation(self, data: dict[str, Any], request: GenerateRequest, body: dict[str, Any],
                    latency: float) -> Generation:
        choice = data["choices"][0]
        text = (choice.get("message") or {}).get("content") if "message" in choice else choice.get("text")
        n_in, n_out = usage_count(data, "prompt_tokens"), usage_count(data, "completion_tokens")
        cost = None
        if self._price is not None:
            cost = (n_in * self._price[0] + n_out * self._price[1]) / 1_000_000
        if request.next_token_candidates:
            logprobs = completion_top_logprobs(choice, request.next_token_candidates)
        else:
            logprobs = score_token_logprobs(choice)
        served, fingerprint = data.get("model"), data.get("system_fingerprint")
        return Generation(text=text or "", model=self.name, next_token_logprobs=logprobs,
                          prompt_tokens=n_in, completion_tokens=n_out, latency_s=latency,
                          finish_reason=_text_or_none(choice.get("finish_reason")), cost=cost,
                          served_model=_text_or_none(served), system_fingerprint=_text_or_none(fingerprint),
                          seed=body.get("seed"), temperature=body.get("temperature"),
                          structured_output=structured_form(request, body))

    async def aclose(self) -> None:
        await self._sender.aclose()


# Stand-ins for the parts of a chat body cut from the request's serialisation (a NUL cannot occur
# unescaped in JSON, so their encoded forms occur nowhere else in a body).
_MESSAGES_HOLE, _SCHEMA_HOLE = "\x00messages\x00", "\x00schema\x00"
_ENCODED_HOLES = (encode(_MESSAGES_HOLE), encode(_SCHEMA_HOLE))


def chat_content(body: dict[str, Any], request: GenerateRequest, capabilities: Capabilities) -> bytes:
    """The bytes of ``body`` (a chat body of ``request``), with its messages and schema, nearly all
    of its size, cut from ``request.wire`` instead of serialised again. In that JSON of every field
    in order (messages, prompt, json_schema, max_tokens, ...) no string holds an unescaped quote,
    so ``,"prompt":`` first closes the messages and the last ``,"max_tokens":`` closes the schema.
    The rest of the body (model, sampling settings, the form of the schema) is the same for most
    calls: encoded once and kept (:func:`_shell`)."""
    wire = request.wire
    messages = wire[len(b'{"messages":'):wire.index(b',"prompt":')]
    parts = _shell(body, capabilities.structured)
    if len(parts) == 2:
        return parts[0] + messages + parts[1]
    start = wire.index(b',"json_schema":') + len(b',"json_schema":')
    return b"".join((parts[0], messages, parts[1], wire[start:wire.rindex(b',"max_tokens":')], parts[2]))


_SHELLS: dict[tuple[Any, ...], tuple[bytes, ...]] = {}


def _shell(body: dict[str, Any], structured: str) -> tuple[bytes, ...]:
    """The encoded body around its messages (and schema): (before, after) or (before, between,
    after), kept by everything else the body holds (with its types: 0 and 0.0 encode apart)."""
    schema = "response_format" in body
    key = (structured if schema else None,
           *((name, type(value), tuple(value) if isinstance(value, list) else value)
             for name, value in body.items() if name not in ("messages", "response_format")))
    found = _SHELLS.get(key)
    if found is None:
        shell = {**body, "messages": _MESSAGES_HOLE}
        if schema:
            shell["response_format"] = response_format(structured, _SCHEMA_HOLE)  # type: ignore[arg-type]
        before, after = encode(shell).split(_ENCODED_HOLES[0], 1)
        found = (before, *after.split(_ENCODED_HOLES[1], 1)) if schema else (before, after)
        if len(_SHELLS) >= 256:  # many models or settings in one process: start again
            _SHELLS.clear()
        _SHELLS[key] = found
    return found


class _Refused(Exception):
    """The endpoint answered with an error that another attempt would not change."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"HTTP {status}: {detail[:200]}")
        self.status, self.detail = status, detail


def _context_from_props(props: dict[str, Any] | None) -> int | None:
    """llama.cpp's server reports its context in /props (top level or in the default settings)."""
    props = props or {}
    settings = props.get("default_generation_settings")
    n_ctx = props.get("n_ctx") or (settings.get("n_ctx") if isinstance(settings, dict) else None)
    return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
