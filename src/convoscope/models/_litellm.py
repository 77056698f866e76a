"""Any provider LiteLLM speaks (Anthropic, Gemini, Azure, Bedrock, Mistral, …): ``litellm:MODEL``.

The spec is LiteLLM's own model string, e.g. ``litellm:anthropic/claude-3-5-haiku-20241022`` or
``litellm:openai/smollm2@http://127.0.0.1:8080/v1`` (an OpenAI-compatible server through LiteLLM).
LiteLLM reads each provider's usual key variable; ``api_key_env`` names another one per judge.

What convoscope adds around the call: the same retry policy, adaptive in-flight limit and
per-minute budgets as the OpenAI-compatible backend; the same capability probe
(:mod:`._capabilities`), so structured output and log-probabilities are sent only where the
endpoint takes them (LiteLLM's own table says what a provider's API takes, not what the server
behind an ``openai/`` route does); and the cost of every call from LiteLLM's price table (shipped
inside the package: it is read locally, never fetched). A seed is not sent to a provider whose
table says it takes none (:attr:`ignored`; the first call warns once). LiteLLM's debugging banner
is off, and its HTTP sessions are closed when the model is.

As on the native route, a timed-out attempt halves the in-flight limit (a slow server is a
congested one) and the deadline runs from when a request leaves, not while it waits behind this
model's own limit. Without both, a chat run against a one-slot llama.cpp server kept eight
requests queued there, each timing out behind the others, until every call ended at the deadline.

On an OpenAI-compatible route (``openai/MODEL@URL``) the calls go through one OpenAI client of
this model's own, closed by :meth:`aclose`: left to itself LiteLLM opens an aiohttp session for
every text completion and closes none ("Unclosed client session" at exit).
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any

from convoscope.models._base import GenerateRequest, Generation, ModelError
from convoscope.models._capabilities import (
    PROBE_MESSAGES,
    STRUCTURED_FORMS,
    Capabilities,
    CapabilityProbe,
    Refused,
    Unavailable,
    is_validation_error,
    refuses,
    response_format,
    structured_form,
)
from convoscope.models._keys import redact_url
from convoscope.models._limits import AdaptiveLimit, RateBudget, estimated_tokens
from convoscope.models._retry import DeadlineClock, RetryPolicy, TransientError, call_with_retries
from convoscope.models._wire import (
    completion_top_logprobs,
    fold_past_whitespace,
    score_token_logprobs,
    usage_count,
    whitespace_lead,
)

_INSTALL = "the litellm backend needs LiteLLM: pip install 'convoscope[providers]'"


def _litellm() -> Any:
    # LiteLLM would fetch its price table from the network at import: use the packaged copy.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:
        raise ModelError(_INSTALL) from None
    litellm.telemetry = False
    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banner on every failure
    return litellm


class LiteLLMModel:
    """A model reached through LiteLLM. Options as for :class:`OpenAIModel` where they apply."""

    def __init__(self, model: str, *, api_base: str | None = None, api_key_env: str | None = None,
                 allow_insecure: bool = False, max_concurrency: int | None = None,
                 rpm: float | None = None, tpm: float | None = None, timeout: float = 60.0,
                 deadline: float = 180.0, max_retries: int = 3, backoff_s: float = 0.5,
                 **_ignored_options: Any) -> None:
        from convoscope.models._keys import resolve_api_key

        self._litellm = _litellm()
        self.model, self.api_base = model, api_base
        self._key = (resolve_api_key(api_base, api_key_env=api_key_env, allow_insecure=allow_insecure)
                     if api_base else (os.environ.get(api_key_env) if api_key_env else None))
        if api_key_env and not self._key:
            raise ModelError(f"the API key variable {api_key_env} is not set")
        if api_base and not self._key:
            self._key = "none"  # LiteLLM insists on a key for OpenAI-compatible routes; local ones ignore it
        self._policy = RetryPolicy(timeout=timeout, deadline=deadline, max_retries=max_retries,
                                   backoff_s=backoff_s)
        self._limit = AdaptiveLimit(max_concurrency)
        self._budget = RateBudget(rpm, tpm)
        supported = set(self._supported())
        self.ignored = ("seed",) if "seed" not in supported else ()
        skipped = () if "response_format" in supported else (
            f"LiteLLM's table says {model} takes no response_format",)
        self.probe = CapabilityProbe(self.name, self._probe_request, logprobs="logprobs" in supported,
                                     forms=STRUCTURED_FORMS if not skipped else (), skipped=skipped)
        self._warned = False
        self._client: Any = None  # the OpenAI client of an OpenAI-compatible route, made on first use

    @property
    def route(self) -> str:
        """How calls are sent: LiteLLM's provider, and whether through this model's own client."""
        provider = self._provider()
        return f"litellm ({provider}, own client)" if self._owns_client(provider) else f"litellm ({provider})"

    def _provider(self) -> str:
        try:
            return str(self._litellm.get_llm_provider(self.model, api_base=self.api_base)[1])
        except Exception:  # noqa: BLE001 - an unknown model: LiteLLM says so on the call
            return "unknown"

    def _owns_client(self, provider: str) -> bool:
        return provider == "openai" and self.api_base is not None

    def _openai_client(self) -> Any:
        if self._client is None and self._owns_client(self._provider()):
            import openai  # a dependency of LiteLLM; its own HTTP client is closed with it

            self._client = openai.AsyncOpenAI(api_key=self._key or "none", base_url=self.api_base,
                                              max_retries=0, timeout=self._policy.timeout)
        return self._client

    def _supported(self) -> list[str]:
        try:
            provider = self._litellm.get_llm_provider(self.model)[1]
            supported = self._litellm.get_supported_openai_params(model=self.model,
                                                                  custom_llm_provider=provider)
            return supported or []
        except Exception:  # noqa: BLE001 - an unknown model: send only the basics
            return []

    @property
    def name(self) -> str:
        return f"litellm:{self.model}" + (f"@{redact_url(self.api_base)}" if self.api_base else "")

    @property
    def provider(self) -> str:
        """LiteLLM's provider of the model (``gen_ai.system`` in traces), e.g. ``anthropic``."""
        return self.model.partition("/")[0] if "/" in self.model else "litellm"

    @property
    def capability_note(self) -> str | None:
        return self.probe.note

    async def generate(self, request: GenerateRequest) -> Generation:
        if self.ignored and not self._warned:
            self._warned = True
            warnings.warn(f"{self.name} does not take {', '.join(self.ignored)}: not sent", stacklevel=2)
        capabilities = await self.probe.get() if request.messages is not None else None
        kwargs = self._kwargs(request, capabilities)
        size = len(str(kwargs.get("messages") or kwargs.get("prompt") or "").encode())
        started = time.perf_counter()

        async def attempt(clock: DeadlineClock) -> Any:
            clock.stop()  # queueing behind our own limits is not the endpoint's time (retries too)
            await self._budget.spend(estimated_tokens(size, request.max_tokens))
            async with self._limit.slot() as sent_at:
                clock.start()
                return await self._attempt(kwargs, sent_at)

        data = (await self._call(attempt)).model_dump()
        if request.next_token_candidates and (lead := whitespace_lead(data)) is not None:
            # As the OpenAI backend does: ask once more past a leading space and fold it in
            # (``attempt`` reads ``kwargs`` when it runs, so it sends the extended prompt).
            kwargs = {**kwargs, "prompt": kwargs["prompt"] + lead[0]}
            data = fold_past_whitespace(data, (await self._call(attempt)).model_dump(), lead,
                                        request.next_token_candidates)
        return self._generation(data, request, kwargs, time.perf_counter() - started)

    async def _probe_request(self, extra: dict[str, Any]) -> None:
        """One small chat call for the capability probe: LiteLLM's errors as Refused / Unavailable."""
        kwargs = {**self._base_kwargs(8, 0.0), "messages": list(PROBE_MESSAGES), **extra}

        async def attempt(clock: DeadlineClock) -> Any:
            clock.stop()
            async with self._limit.slot() as sent_at:
                clock.start()
                return await self._attempt(kwargs, sent_at, probing=True)

        try:
            await call_with_retries(attempt, self._policy, clock_starts_in_attempt=True)
        except TransientError as error:
            raise Unavailable(str(error), status=error.status) from None
        except TimeoutError:
            raise Unavailable(f"no answer within the deadline of {self._policy.deadline:g} s") from None

    async def _call(self, attempt: Any) -> Any:
        try:
            return await call_with_retries(attempt, self._policy, clock_starts_in_attempt=True)
        except TransientError as error:
            raise ModelError(f"{self.name}: {error} (gave up after retries or the deadline)") from None
        except TimeoutError:
            raise ModelError(f"{self.name}: no answer within the deadline of "
                             f"{self._policy.deadline:g} s") from None

    def _base_kwargs(self, max_tokens: int, temperature: float) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "temperature": temperature,
                                  "timeout": self._policy.timeout, "num_retries": 0,
                                  "max_retries": 0}  # no SDK retries under ours
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._key:
            kwargs["api_key"] = self._key
        return kwargs

    def _kwargs(self, request: GenerateRequest, capabilities: Capabilities | None) -> dict[str, Any]:
        kwargs = {**self._base_kwargs(request.max_tokens, request.temperature), **request.sampling()}
        if request.stop:
            kwargs["stop"] = list(request.stop)
        if request.seed is not None and "seed" not in self.ignored:
            kwargs["seed"] = request.seed
        if request.messages is None or capabilities is None:
            kwargs["prompt"] = request.prompt
            if request.next_token_candidates:
                kwargs["logprobs"] = 20
            return kwargs
        kwargs["messages"] = [message.model_dump() for message in request.messages]
        if request.json_schema is not None and capabilities.structured != "none":
            kwargs["response_format"] = response_format(capabilities.structured, request.json_schema)
        if capabilities.logprobs:
            kwargs.update(logprobs=True, top_logprobs=20)
        return kwargs

    async def _attempt(self, kwargs: dict[str, Any], sent_at: float, *, probing: bool = False) -> Any:
        errors = self._litellm.exceptions
        call = self._litellm.acompletion if "messages" in kwargs else self._litellm.atext_completion
        client = self._openai_client()
        try:
            response = await call(**kwargs, **({"client": client} if client is not None else {}))
        except errors.RateLimitError as error:
            self._limit.throttled(sent_at)
            raise TransientError(f"HTTP 429: {str(error)[:200]}", status=429) from None
        except errors.ContextWindowExceededError as error:
            raise ModelError(f"{self.name}: the prompt exceeds the model's context "
                             f"({str(error)[:200]})") from None
        except (errors.AuthenticationError, errors.PermissionDeniedError):
            raise ModelError(f"{self.name}: not authorised; name the variable holding this provider's "
                             "key with api_key_env") from None
        except errors.Timeout as error:
            # Too slow to answer in time is congestion, as a 429 is: fewer requests at once (a
            # llama.cpp server keeps computing the abandoned ones), as the native route does.
            self._limit.throttled(sent_at)
            raise TransientError(f"no answer within the timeout of {self._policy.timeout:g} s "
                                 f"({str(error)[:160]})") from None
        except (errors.APIConnectionError, errors.InternalServerError,
                errors.ServiceUnavailableError, errors.BadGatewayError) as error:
            status = getattr(error, "status_code", None)
            if isinstance(error, errors.InternalServerError) and is_validation_error(str(error)):
                self._refused(status, error, probing)  # a server's validation error: never transient
            raise TransientError(f"{type(error).__name__}: {str(error)[:200]}",
                                 status=status if isinstance(status, int) else None) from None
        except Exception as error:  # noqa: BLE001 - 400/404/422, unsupported params, any other answer
            self._refused(getattr(error, "status_code", None), error, probing)
        self._limit.succeeded()
        return response

    def _refused(self, status: Any, error: Exception, probing: bool) -> None:
        """Raise what an answer that no attempt would change is: to the capability probe, Refused
        when it says the field is not taken (else Unavailable: nothing learnt); to a request, its
        ModelError."""
        status = status if isinstance(status, int) else None
        if status is None and isinstance(error, self._litellm.exceptions.BadRequestError):
            status = 400  # LiteLLM's own refusal of a parameter (UnsupportedParamsError)
        if probing and refuses(status, str(error)):
            raise Refused(status, str(error)) from None
        if probing:
            raise Unavailable(f"{type(error).__name__}: {str(error)[:200]}", status=status) from None
        raise ModelError(f"{self.name}: {type(error).__name__}: {str(error)[:200]}") from None

    def _generation(self, data: dict[str, Any], request: GenerateRequest, kwargs: dict[str, Any],
                    latency: float) -> Generation:
        choice = data["choices"][0]
        if request.messages is None:
            text = choice.get("text") or ""
            logprobs = completion_top_logprobs(choice, request.next_token_candidates)
        else:
            text = (choice.get("message") or {}).get("content") or ""
            logprobs = score_token_logprobs(choice)
        prompt_tokens = usage_count(data, "prompt_tokens")
        completion_tokens = usage_count(data, "completion_tokens")
        try:
            cost: float | None = float(sum(self._litellm.cost_per_token(
                model=self.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)))
        except Exception:  # noqa: BLE001 - a model missing from the price table: cost unknown
            cost = None
        return Generation(
            text=text, model=self.name, next_token_logprobs=logprobs, prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens, latency_s=latency,
            finish_reason=choice.get("finish_reason"), cost=cost, served_model=data.get("model"),
            system_fingerprint=data.get("system_fingerprint"),
            seed=request.seed if "seed" not in self.ignored else None, temperature=request.temperature,
            structured_output=structured_form(request, kwargs))

    async def aclose(self) -> None:
        """Close the HTTP clients LiteLLM keeps for the process and forget them, so that no
        "Unclosed client session" is reported at exit and a later model opens fresh ones."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
        await self._litellm.close_litellm_async_clients()
        clients = getattr(self._litellm, "in_memory_llm_clients_cache", None)
        if clients is not None:
            clients.flush_cache()
