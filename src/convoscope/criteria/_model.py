"""Criterion and Scale: what "good" means, and the values a judgement may take."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

ScaleKind = Literal["binary", "range", "labels"]
Granularity = Literal["response", "dialogue"]
Evaluation = Literal["llm", "llm+documents", "metric"]


class Level(BaseModel):
    """One value of a scale with its definition and examples."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: int | str = Field(description="The score or label this level stands for.")
    name: str | None = Field(default=None, description="A short name, e.g. 'Good'.")
    definition: str = Field(description="When a response earns this level.")
    examples: tuple[str, ...] = Field(default=(), description="Example responses at this level.")


class Scale(BaseModel):
    """The values a judgement may take.

    * ``binary``: two labels (``labels`` gives them, positive first), stored as 1 / 0.
    * ``range``: integers from ``minimum`` to ``maximum``.
    * ``labels``: a closed set of labels, stored as text.

    ``allow_idk`` adds an "I don't know" answer, which becomes an unscored verdict
    (``unscored_reason='idk'``), never a value.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ScaleKind
    minimum: int | None = None
    maximum: int | None = None
    labels: tuple[str, ...] = ()
    allow_idk: bool = False

    @model_validator(mode="after")
    def _check(self) -> Scale:
        if self.kind == "range":
            if self.minimum is None or self.maximum is None:
                raise ValueError("a range scale needs both 'minimum' and 'maximum'")
            if self.maximum <= self.minimum:
                raise ValueError("a range scale needs maximum > minimum")
            if self.maximum - self.minimum > 100:
                raise ValueError("a range scale may span at most 100 steps")
        elif self.kind == "binary":
            if len(self.labels) not in (0, 2):
                raise ValueError("a binary scale takes exactly two labels (positive first)")
        elif self.kind == "labels":
            if len(self.labels) < 2:
                raise ValueError("a labels scale needs at least two labels")
            if len(set(self.labels)) != len(self.labels):
                raise ValueError("scale labels must be distinct")
        return self

    @property
    def binary_labels(self) -> tuple[str, str]:
        """The positive and the negative label of a binary scale."""
        if self.labels:
            return (self.labels[0], self.labels[1])
        return ("yes", "no")

    def values(self) -> list[int | str]:
        """All admissible stored values, in scale order."""
        if self.kind == "range":
            assert self.minimum is not None and self.maximum is not None
            return list(range(self.minimum, self.maximum + 1))
        if self.kind == "binary":
            return [1, 0]
        return list(self.labels)

    def is_numeric(self) -> bool:
        return self.kind in ("range", "binary")

    def coerce(self, raw: object) -> int | str | None:
        """Map a raw model answer onto a stored value, or None when it is not on the scale."""
        if raw is None or isinstance(raw, bool) and self.kind != "binary":
            return None
        if self.kind == "binary":
            return _coerce_binary(raw, self.binary_labels)
        if self.kind == "range":
            number = _as_number(raw)
            if number is None or not float(number).is_integer():
                return None
            value = int(number)
            assert self.minimum is not None and self.maximum is not None
            return value if self.minimum <= value <= self.maximum else None
        text = str(raw).strip().lower()
        for label in self.labels:
            if label.lower() == text:
                return label
        return None


def _as_number(raw: object) -> float | None:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return float(raw)
    try:
        return float(str(raw).strip())
    except ValueError:
        return None


_TRUE_WORDS = {"yes", "true", "1", "present", "positive", "fulfilled", "pass", "relevant"}
_FALSE_WORDS = {"no", "false", "0", "absent", "negative", "not fulfilled", "fail", "not relevant"}


def _coerce_binary(raw: object, labels: tuple[str, str]) -> int | None:
    if isinstance(raw, bool):
        return int(raw)
    number = _as_number(raw)
    if number is not None:
        return int(number) if number in (0.0, 1.0) else None
    text = str(raw).strip().lower()
    if text == labels[0].lower() or text in _TRUE_WORDS:
        return 1
    if text == labels[1].lower() or text in _FALSE_WORDS:
        return 0
    return None


class ExplanationOption(BaseModel):
    """A reason a rater may tick beside a score, e.g. 'genericness'; a ``free_text`` option
    ('other', seed 002) is ticked with words saying what applies instead (the rater's reason
    or note)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_\-]*$")
    description: str
    when: tuple[int | str, ...] = Field(
        default=(), description="The answers after which the option is offered (empty: any)."
    )
    free_text: bool = Field(default=False, description=(
        "Chosen only with words saying what applies (the reason / note): the 'other' option of "
        "seed 002, for when none of the listed reasons fits."))


class Criterion(BaseModel):
    """A question a judge answers about an item, with its scale and rubric."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_\-]*$", description="Identifier, e.g. 'effort'.")
    suite: str | None = Field(default=None, description="The suite it belongs to.")
    question: str = Field(description="The question put to the rater.")
    definition: str = Field(description="What the criterion measures, in a few sentences.")
    granularity: Granularity = "response"
    scale: Scale
    levels: tuple[Level, ...] = Field(default=(), description="Rubric: one entry per scale value.")
    options: tuple[ExplanationOption, ...] = Field(
        default=(), description="Explanation options a rater may choose (multi-select)."
    )
    ask_reason: bool = Field(default=True, description="Ask for a free-text reason.")
    ask_relevance: bool = Field(
        default=False, description="Ask whether the criterion applies to the item at all (KPIs)."
    )
    higher_is_better: bool = Field(
        default=True, description="False for issue labels, where 1 means a problem is present."
    )
    instructions: str | None = Field(default=None, description="Extra guidance for the judge.")
    domain: str | None = Field(default=None, description=(
        "The setting the conversation takes place in, told to the judge (e.g. 'the in-car "
        "assistant of a car manufacturer'); a suite default, or `convoscope judge --domain`."))
    evaluation: Evaluation = Field(
        default="llm",
        description="'llm': a judge reads the item; 'llm+documents': the judge also needs the "
        "reference documents (the item's meta.documents, shown to the judge as 'Reference "
        "documents'); 'metric': computed from the log, never judged.",
    )
    parameters: dict[str, float | int | str] = Field(
        default_factory=dict, description="Settings of a metric criterion, e.g. max_seconds."
    )

    @model_validator(mode="before")
    @classmethod
    def _binary_labels_to_values(cls, data: Any) -> Any:
        """Let YAML name binary levels by label ('present'); store them as 1 / 0."""
        if not isinstance(data, dict):
            return data
        scale = data.get("scale")
        if isinstance(scale, dict) and scale.get("kind") == "binary":
            labels = [str(label).lower() for label in scale.get("labels") or ("yes", "no")]
            to_value = {labels[0]: 1, labels[1]: 0} if len(labels) == 2 else {}
            data = dict(data)
            data["levels"] = [_relabel_level(level, to_value) for level in data.get("levels") or ()]
            data["options"] = [_relabel_option(option, to_value) for option in data.get("options") or ()]
        return data

    @field_validator("levels")
    @classmethod
    def _levels_on_scale(cls, levels: tuple[Level, ...], info: ValidationInfo) -> tuple[Level, ...]:
        scale = info.data.get("scale")
        if scale is None:
            return levels
        allowed = scale.values()
        for level in levels:
            if level.value not in allowed:
                raise ValueError(f"level value {level.value!r} is not on the scale (allowed: {allowed})")
        seen = [level.value for level in levels]
        if len(set(seen)) != len(seen):
            raise ValueError("two levels define the same scale value")
        return levels

    @field_validator("options")
    @classmethod
    def _options_on_scale(cls, options: tuple[ExplanationOption, ...], info: ValidationInfo
                          ) -> tuple[ExplanationOption, ...]:
        scale = info.data.get("scale")
        allowed = scale.values() if scale is not None else []
        for option in options:
            for answer in option.when:
                if scale is not None and answer not in allowed:
                    raise ValueError(f"option {option.name!r}: 'when' answer {answer!r} is not on the scale")
        return options

    @model_validator(mode="after")
    def _metric_has_parameters(self) -> Criterion:
        if self.evaluation == "metric" and not self.parameters.get("metric"):
            raise ValueError("a metric criterion needs parameters.metric (e.g. 'latency')")
        return self

    @property
    def judged_by_model(self) -> bool:
        return self.evaluation != "metric"

    def level(self, value: int | str) -> Level | None:
        """The rubric level for a stored value, if the rubric defines one."""
        return next((level for level in self.levels if level.value == value), None)

    def offered_options(self, value: int | str) -> tuple[ExplanationOption, ...]:
        """The options offered after the stored answer ``value`` (those without ``when`` always)."""
        return tuple(option for option in self.options if not option.when or value in option.when)

    def answer_word(self, value: int | str) -> str:
        """How a stored value is written in prompts and reports ('present' for 1 on a binary scale)."""
        if self.scale.kind == "binary" and isinstance(value, int):
            return self.scale.binary_labels[0 if value == 1 else 1]
        return str(value)


def _relabel(value: Any, to_value: dict[str, int]) -> Any:
    return to_value.get(value.lower(), value) if isinstance(value, str) else value


def _relabel_level(level: Any, to_value: dict[str, int]) -> Any:
    if isinstance(level, dict) and "value" in level:
        return {**level, "value": _relabel(level["value"], to_value)}
    return level


def _relabel_option(option: Any, to_value: dict[str, int]) -> Any:
    if isinstance(option, dict) and option.get("when"):
        return {**option, "when": [_relabel(answer, to_value) for answer in option["when"]]}
    return option
