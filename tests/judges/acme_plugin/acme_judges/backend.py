"""A scripted backend (no model runs): answers every chat request with the same score. It stands
for a house model client that a package registers under its own spec prefix."""

from __future__ import annotations

import json
from typing import Any

from convoscope.models import GenerateRequest, Generation


class ScriptedModel:
    def __init__(self, score: str) -> None:
        self.score = int(score or 1)

    @property
    def name(self) -> str:
        return f"acme-scripted:{self.score}"

    async def generate(self, request: GenerateRequest) -> Generation:
        text = json.dumps({"score": self.score, "reason": "scripted"})
        return Generation(text=text, model=self.name, prompt_tokens=3, completion_tokens=2)

    async def aclose(self) -> None:
        return None


def scripted_backend(rest: str, **_options: Any) -> ScriptedModel:
    return ScriptedModel(rest)
