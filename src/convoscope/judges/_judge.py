"""Judges: the Protocol, the rubric judge, and the registry of judge factories."""

from __future__ import annotations

import functools
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.judges._options import with_options
from convoscope.judges._parse import parse_answer, score_distribution
from convoscope.judges._personas import persona_rules
from convoscope.judges._prompt import build_request
from convoscope.judges._relevance import with_relevance
from convoscope.judges._safety import SAFETY_RULES_VERSION, apply_offline_rules
from convoscope.judges._verdict import Verdict
from convoscope.models import EndpointUnreachable, GenerateRequest, Generation, Model, ModelError

JudgeMode = Literal["chat", "completion"]


@runtime_checkable
class Judge(Protocol):
    """Anything that applies a criterion to an item. Must be safe to call concurrently."""

    @property
    def rater(self) -> str:
        """The rater id written into every verdict, e.g. ``model:openai:gpt-4o``."""
        ...

    def identity(self) -> dict[str, Any]:
        """Everything about the judge that can change its verdicts (for resume keys)."""
        ...

    async def __call__(self, item: Item, criterion: Criterion) -> Verdict: ...


@dataclass(frozen=True)
class RubricJudge:
    """Asks a model to place an item on a criterion's scale, following the rubric.

    In ``chat`` mode the model answers in JSON (score, reason, options, relevant); when the
    backend returns next-token probabilities they are recorded too. In ``completion`` mode (for
    tiny base models) the score is read from the next-token distribution over the scale values
    after a few-shot prompt: ``value`` is the most probable value, ``expected_value`` the
    probability-weighted mean. Failures become unscored verdicts, never default scores.
    """

    model: Model
    mode: JudgeMode = "chat"
    persona: str | None = None
    persona_name: str | None = None
    max_tokens: int = 400
    temperature: float = 0.0
    seed: int = 0
    repeat: int | None = None  # which of several repeated judgements this is (rater suffix ~rN)

    @property
    def rater(self) -> str:
        suffix = f"#{self.persona_name or _short_hash(self.persona)}" if self.persona else ""
        mode = "" if self.mode == "chat" else f"[{self.mode}]"
        again = f"~r{self.repeat}" if self.repeat is not None else ""
        return f"model:{self.model.name}{mode}{suffix}{again}"

    def identity(self) -> dict[str, Any]:
        found = {"kind": "rubric", "model": self.model.name, "mode": self.mode,
                 "persona": self.persona, "max_tokens": self.max_tokens}
        if persona_rules(self.persona_name):  # new rules are new work for that persona's verdicts
            found["offline_rules"] = f"{','.join(persona_rules(self.persona_name))}@{SAFETY_RULES_VERSION}"
        return found

    def request(self, item: Item, criterion: Criterion) -> GenerateRequest:
        """The model request this judge sends for ``item`` on ``criterion`` (what its key hashes)."""
        request = build_request(criterion, item, mode=self.mode, persona=self.persona,
                                max_tokens=self.max_tokens)
        if self.temperature or self.seed:  # left as built otherwise: keys stay as they were
            request = request.model_copy(update={"temperature": self.temperature, "seed": self.seed})
        return request

    def task_key(self, item: Item, criterion: Criterion, request: GenerateRequest | None = None) -> str:
        """Equal exactly when the model would be asked the same thing: a hash of the rendered
        request (messages or prompt, schema, sampling settings; its one serialisation, which
        the cache key hashes and the body is cut from) and the model's identity."""
        rendered = request if request is not None else self.request(item, criterion)
        asked = hashlib.sha256(rendered.wire).hexdigest()
        # The text _digest would hash for {"judge", "model", "request", "item_id", "criterion"},
        # with the judge's part (the same for every task) serialised once per judge.
        text = (f'{{"criterion": {_json(criterion.name)}, "item_id": {_json(item.id)}, '
                f'{self._key_middle}"request": "{asked}"}}')
        return hashlib.sha256(text.encode()).hexdigest()

    @functools.cached_property
    def _key_middle(self) -> str:
        return f'"judge": {_json(self.identity())}, "model": {_json(self.model.name)}, '

    async def __call__(self, item: Item, criterion: Criterion, *,
                       request: GenerateRequest | None = None) -> Verdict:
        request = request if request is not None else self.request(item, criterion)
        started = time.perf_counter()
        try:
            generation = await self.model.generate(request)
        except EndpointUnreachable:
            raise  # not this item's failure: the run stops (runs/_engine.py)
        except ModelError as error:
            return self._verdict(item, criterion, value=None, unscored_reason="model_error",
                                 raw=str(error), latency_s=time.perf_counter() - started)
        if self.mode == "completion":  # relevance and options: more next-token questions
            verdict = self._from_distribution(item, criterion, generation)
            verdict = await with_relevance(verdict, self.model, criterion, item, persona=self.persona)
            verdict = await with_options(verdict, self.model, criterion, item, persona=self.persona)
        else:
            verdict = self._from_text(item, criterion, generation)
        return apply_offline_rules(verdict, item, criterion, self.persona_name)

    def _from_text(self, item: Item, criterion: Criterion, generation: Generation) -> Verdict:
        answer = parse_answer(generation.text, criterion)
        extra: dict[str, Any] = {}
        if generation.next_token_logprobs:
            scored = score_distribution(generation.next_token_logprobs, criterion)
            if scored is not None:
                extra = {"distribution": scored[0], "expected_value": scored[1]}
        return self._verdict(
            item, criterion, value=answer.value, unscored_reason=answer.unscored_reason,
            reason=answer.reason, options=answer.options, relevant=answer.relevant,
            raw=generation.text, **extra, **_usage(generation),
        )

    def _from_distribution(self, item: Item, criterion: Criterion, generation: Generation) -> Verdict:
        scored = score_distribution(generation.next_token_logprobs or {}, criterion)
        if scored is None:
            return self._verdict(item, criterion, value=None, unscored_reason="parse_failure",
                                 raw=generation.text or "no scale value among next tokens",
                                 **_usage(generation))
        distribution, expected, mode_value = scored
        usage = _usage(generation)
        if self.temperature > 0:  # a repeat samples from the distribution, tempered, seeded
            mode_value = sample_value(distribution, criterion, temperature=self.temperature,
                                      seed=(self.seed, item.id, criterion.name))
            usage.update(temperature=self.temperature, seed=self.seed)  # the draw is the judge's
        return self._verdict(item, criterion, value=mode_value, distribution=distribution,
                             expected_value=expected, raw=generation.text, **usage)

    def _verdict(self, item: Item, criterion: Criterion, **fields: Any) -> Verdict:
        return Verdict(item_id=item.id, criterion=criterion.name, rater=self.rater,
                       language=item.language, system=item.system, **fields)


def _usage(generation: Generation) -> dict[str, Any]:
    return {"prompt_tokens": generation.prompt_tokens,
            "completion_tokens": generation.completion_tokens, "cost": generation.cost,
            "latency_s": generation.latency_s, "cached": generation.cached,
            "served_model": generation.served_model, "seed": generation.seed,
            "temperature": generation.temperature}


def sample_value(distribution: dict[str, float], criterion: Criterion, *, temperature: float,
                 seed: tuple[Any, ...]) -> int | str:
    """A scale value drawn from a next-token distribution raised to ``1 / temperature`` — what a
    model sampling at that temperature would answer — with a generator seeded by ``seed`` (the
    same seed, item and criterion draw the same value on every machine)."""
    import random

    values = criterion.scale.values()
    weights = [distribution.get(str(value), 0.0) ** (1.0 / temperature) for value in values]
    if not any(weights):
        weights = [1.0] * len(values)
    digest = hashlib.sha256(repr(seed).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big")).choices(values, weights=weights)[0]


def _short_hash(text: str | None) -> str:
    return hashlib.sha256((text or "").encode()).hexdigest()[:8]


def judge_key(judge: Judge, item: Item, criterion: Criterion) -> str:
    """A key that is equal exactly when a judgement would be the same work (for resume).

    Judges that render a model request (rubric, one-call, panels of them) hash that request,
    so anything the judge would see (``meta.knowledge``, persona, documents, the rubric, the
    sampling settings) is part of the key. Other judges hash their identity, the whole item
    (``meta`` included) and the criterion."""
    own = getattr(judge, "task_key", None)
    if callable(own):
        return str(own(item, criterion))
    return _digest({"judge": judge.identity(), "item": item.model_dump(mode="json"),
                    "criterion": criterion.model_dump(mode="json")})


def _digest(payload: dict[str, Any]) -> str:
    return hashlib.sha256(_json(payload).encode()).hexdigest()


def _json(value: Any) -> str:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False)``, from one encoder: json.dumps
    builds an encoder per call given any argument, and task keys ask twice a task."""
    return _KEY_ENCODER.encode(value)


_KEY_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
