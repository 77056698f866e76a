"""The Item and Turn models: what is judged."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Turn(BaseModel):
    """One utterance in a conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    speaker: str = Field(description="Who spoke, e.g. 'user', 'system', 'A', 'bot'.")
    text: str = Field(description="What was said.")


class Item(BaseModel):
    """What is judged: a response to a question or context, or a whole dialogue.

    ``response`` is the judged turn. When it is absent the whole ``context`` (a dialogue) is
    judged; criteria of dialogue granularity use that form.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, description="Unique identifier within the input file.")
    question: str | None = Field(default=None, description="The survey question, if any.")
    context: tuple[Turn, ...] = Field(default=(), description="Earlier turns, oldest first.")
    response: str | None = Field(default=None, description="The judged turn; None = whole dialogue.")
    reference: str | None = Field(default=None, description="A ground-truth or reference turn.")
    language: str | None = Field(default=None, description="BCP-47 code such as 'en' or 'ko'.")
    system: str | None = Field(default=None, description="The chatbot or source that produced it.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Free-form metadata.")

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        # Numeric ids are common in CSV and JSONL exports; keep them as their text.
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(int(value)) if float(value).is_integer() else str(value)
        return value

    @property
    def is_dialogue(self) -> bool:
        """True when the whole dialogue is the target (no single response)."""
        return self.response is None

    def content_key(self) -> dict[str, Any]:
        """Everything about the item that can change a judgement (used for cache and resume)."""
        return self.model_dump(mode="json", exclude={"id", "meta", "system"})
