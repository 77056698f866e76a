"""A judging run's settings: which judges (``JudgeSpec``) and how (``RunOptions``), checked before
anything is created. The lowest layer of ``runs/``: the dispatcher (``_build``), the local run
(``_here``), the worker processes (``_workers``) and Ray (``_ray``) all read it; it reads none of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from convoscope.errors import ConfigError
from convoscope.judges import Judge, JudgeMode, PoolRule, TieRule
from convoscope.runs._run import DEFAULT_LEASE_S

if TYPE_CHECKING:
    from convoscope.batch._model import BatchFiles

EMBEDDED_DEFAULT = "embedded"
BESIDE_STORE = "beside-store"  # the default response cache: <store>.cache.db next to a SQLite store
OFFLINE_WARNING = (
    "The embedded model is tiny. It lets you try convoscope offline; its scores carry no "
    "measured signal about quality. Point the judge (--judge) at a capable model before you publish."
)
Pool = PoolRule | Literal["max-vote"]
Engine = Literal["local", "ray"]


@dataclass(frozen=True)
class JudgeSpec:
    """One judge by name: a model spec, a mode, an optional persona."""

    model: str
    mode: JudgeMode | None = None
    persona: str | None = None
    persona_name: str | None = None

    def resolved_mode(self) -> JudgeMode:
        if self.mode is not None:
            return self.mode
        # Tiny embedded models cannot follow a JSON instruction (MEASURED.md): read their
        # next-token distribution instead.
        return "completion" if is_embedded(self.model) else "chat"


JudgeLike = str | JudgeSpec | Judge  # a model spec, a python:MODULE:NAME spec, or a built judge


def is_embedded(model_spec: str) -> bool:
    return model_spec == "embedded" or model_spec.startswith("embedded:")


def judge_specs(models: Sequence[str], *, mode: str = "auto",
                personas: Sequence[str] = ()) -> list[JudgeSpec]:
    """One spec per model, or per (model, persona) when personas are given (a panel).

    ``personas``: library names (``brand-ambassador``, ...) or ``NAME=TEXT``."""
    from convoscope.judges import resolve_persona

    if mode not in ("auto", "chat", "completion"):
        raise ConfigError(f"unknown judge mode {mode!r}: use auto, chat or completion")
    chosen: JudgeMode | None = None if mode == "auto" else mode  # type: ignore[assignment]
    try:
        parsed = [resolve_persona(entry) for entry in personas]
    except ValueError as error:
        raise ConfigError(f"persona: {error}") from None
    if not parsed:
        return [JudgeSpec(model, chosen) for model in models]
    return [JudgeSpec(model, chosen, text, name) for model in models for name, text in parsed]


def as_specs(judge: JudgeLike | Sequence[JudgeLike]) -> list[JudgeSpec | Judge]:
    """Specs from a model spec string, a JudgeSpec, a built judge (e.g. a Python judge), or a list."""
    entries: list[JudgeLike] = [judge] if isinstance(judge, str | JudgeSpec) or not isinstance(
        judge, Sequence) else list(judge)
    return [JudgeSpec(entry) if isinstance(entry, str) else entry for entry in entries]


@dataclass(frozen=True)
class RunOptions:
    """Every setting of a judging run with its default — the one list that ``convoscope judge``
    and :func:`judge` / :func:`judge_async` share, by the same names (a test compares them)."""

    mode: str = "auto"
    personas: tuple[str, ...] = ()
    pool: Pool = "majority"
    ties: TieRule = "unscored"
    quorum: int = 1
    repeats: int = 1
    temperature: float | None = None
    max_tokens: int = 400
    one_call: bool = False
    concurrency: int = 8
    cache_path: str | Path | None = BESIDE_STORE
    retry_unscored: bool = False
    lease_s: float = DEFAULT_LEASE_S
    timeout: float | None = None
    deadline: float | None = None
    max_retries: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    api_key_env: tuple[str, ...] = ()
    allow_insecure_key: bool = False
    context_length: int | None = None
    batch: str | BatchFiles | None = None
    batch_max_requests: int | None = None
    batch_max_bytes: int | None = None
    otel: bool = False
    workers: int | None = None
    engine: Engine = "local"
    ray_address: str | None = None

    def __post_init__(self) -> None:
        if self.engine not in ("local", "ray"):
            raise ConfigError(f"engine must be 'local' or 'ray', not {self.engine!r}")
        _check_settings(self)
        if self.batch and (self.engine == "ray" or (self.workers or 1) > 1):
            raise ConfigError("a batch run keeps its ledger beside one process's cache: "
                              "not with several workers or the ray engine")

    def model_options(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """What every backend of the run is built with (the endpoint's in-flight limit follows
        the run's concurrency unless ``extra`` sets it)."""
        from convoscope.models import endpoint_options

        options = {"max_concurrency": max(1, self.concurrency), **endpoint_options(
            timeout=self.timeout, deadline=self.deadline, max_retries=self.max_retries, rpm=self.rpm,
            tpm=self.tpm, api_key_env=self.api_key_env, allow_insecure_key=self.allow_insecure_key,
            context_length=self.context_length)}
        if self.batch:
            options["batch"] = self.batch
            options.update({name: value for name, value in (("batch_max_requests", self.batch_max_requests),
                                                            ("batch_max_bytes", self.batch_max_bytes))
                            if value is not None})
        if self.otel:
            options["trace"] = True
        return {**options, **(extra or {})}


# Settings that must be whole numbers of at least 1, numbers above 0, or numbers of at least 0;
# None (unset) leaves a backend's default. Checked before a store, a file or a model is touched.
_AT_LEAST_ONE = ("concurrency", "max_tokens", "quorum", "repeats", "workers", "context_length",
                 "batch_max_requests", "batch_max_bytes")
_ABOVE_ZERO = ("lease_s", "timeout", "deadline", "rpm", "tpm")
_NOT_NEGATIVE = ("max_retries", "temperature")


def _check_settings(options: RunOptions) -> None:
    """A setting out of range is a one-line ConfigError naming it (by its option name), not a run
    that silently does nothing (``--concurrency 0``) or asks for empty answers (``--max-tokens 0``)."""
    for name in (*_AT_LEAST_ONE, *_ABOVE_ZERO, *_NOT_NEGATIVE):
        value = getattr(options, name)
        if value is None:
            continue
        flag = "--lease" if name == "lease_s" else "--" + name.replace("_", "-")
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            raise ConfigError(f"{name} ({flag}) must be a number, not {value!r}")
        if name in _AT_LEAST_ONE and (value < 1 or value != int(value)):
            raise ConfigError(f"{name} ({flag}) must be a whole number of at least 1, not {value}")
        if name in _ABOVE_ZERO and value <= 0:
            raise ConfigError(f"{name} ({flag}) must be above 0, not {value}")
        if name in _NOT_NEGATIVE and value < 0:
            raise ConfigError(f"{name} ({flag}) must be at least 0, not {value}")
