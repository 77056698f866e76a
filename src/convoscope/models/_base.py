"""The one interface every language-model backend implements."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from convoscope.errors import ConvoscopeError


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


class GenerateRequest(BaseModel):
    """A request to a model. Either ``messages`` (chat) or ``prompt`` (raw completion) is set.

    ``json_schema`` asks for structured output where the backend supports it.
    ``next_token_candidates`` asks for the log-probability of each candidate string as the next
    token right after the prompt (used to score with tiny base models); backends that cannot
    answer leave ``Generation.next_token_logprobs`` as None.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: tuple[Message, ...] | None = None
    prompt: str | None = None
    json_schema: dict[str, Any] | None = None
    max_tokens: int = 512
    temperature: float = 0.0
    top_p: float | None = Field(default=None, gt=0, le=1,
                                description="Nucleus sampling; None: the backend's default.")
    presence_penalty: float | None = Field(default=None, ge=-2, le=2,
                                           description="Penalty on tokens already used; None: none.")
    stop: tuple[str, ...] = ()
    next_token_candidates: tuple[str, ...] = ()
    seed: int | None = 0

    @cached_property
    def wire(self) -> bytes:
        """The request serialised once (pydantic's JSON of every field, as ``model_dump_json``):
        its task key and its cache key hash these bytes, and the chat body sent is cut from them
        (``models/_openai.py``), so a request is serialised once however many keys it has."""
        return self.__pydantic_serializer__.to_json(self)

    def with_wire(self, wire: bytes) -> GenerateRequest:
        """This request, its serialisation given: ``wire`` must be the bytes :attr:`wire` would
        compute (a caller that builds them from a template: ``judges/_prompt.build_request``);
        returned for chaining."""
        self.__dict__["wire"] = wire  # the cached property's own slot, filled before its first use
        return self

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> GenerateRequest:
        copy = super().model_copy(update=update, deep=deep)
        copy.__dict__.pop("wire", None)  # a changed copy is serialised anew, never with the old bytes
        return copy

    def sampling(self) -> dict[str, float]:
        """The optional sampling settings that are set, by their OpenAI / llama.cpp names."""
        return {name: value for name in ("top_p", "presence_penalty")
                if (value := getattr(self, name)) is not None}


class Generation(BaseModel):
    """What a model returned, with usage accounting."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    model: str
    next_token_logprobs: dict[str, float] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    finish_reason: str | None = None
    cost: float | None = None
    served_model: str | None = Field(default=None, description=(
        "The model as the server named it in its answer (e.g. a dated version), or the weights file."))
    system_fingerprint: str | None = Field(default=None, description=(
        "The server's build / configuration fingerprint when it sends one."))
    seed: int | None = Field(default=None, description="The seed sent with the request.")
    temperature: float | None = Field(default=None, description="The temperature actually used.")
    structured_output: str | None = Field(default=None, description=(
        "How a request with a JSON schema asked for it: 'json_schema', 'json_object' (the schema "
        "in llama.cpp's form), 'tool' (a forced tool call) or 'none' (the schema only in the prompt, "
        "because the endpoint took no form); None when no schema was asked for."))


class ModelError(ConvoscopeError, RuntimeError):
    """The backend failed for good (after retries), or was misconfigured.

    Raised by ``generate`` it is one request's failure (judges record it as ``model_error``);
    raised while building a model it is a setting the user must fix."""


class EndpointUnreachable(ModelError):
    """Every call to this endpoint would fail alike: no connection could be made (nothing
    listens, the host is unknown) or the endpoint refuses the credentials (HTTP 401 / 403).

    Not one item's failure: a run stops at once on it (verdicts made so far are kept, the rest
    stays outstanding) instead of recording the same error for every item."""


@runtime_checkable
class Model(Protocol):
    """A language model. One async method; implementations must be safe to call concurrently."""

    @property
    def name(self) -> str:
        """A stable identity: everything about the backend that changes its output."""
        ...

    async def generate(self, request: GenerateRequest) -> Generation: ...

    async def aclose(self) -> None: ...


class UsageTotals(BaseModel):
    """Usage summed over calls — the one place that says what counts: a cache hit is no call and
    costs nothing; a call that failed after its retries (``errors``) spends no counted tokens; every
    other call adds its tokens and cost. Runs (``RunSummary``) and synth count through it."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    errors: int = 0

    def record(self, *, cached: bool = False, failed: bool = False, prompt_tokens: int = 0,
               completion_tokens: int = 0, cost: float | None = None) -> None:
        """Count one call (or one cache hit, or one failed call)."""
        if cached:
            self.cache_hits += 1
        elif failed:
            self.errors += 1
        else:
            self.calls += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.cost += cost or 0.0

    def add(self, generation: Generation) -> None:
        self.record(cached=generation.cached, prompt_tokens=generation.prompt_tokens,
                    completion_tokens=generation.completion_tokens, cost=generation.cost)

    def merge(self, other: UsageTotals) -> None:
        """Add ``other``'s counts into these."""
        for name in ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cost += other.cost
