"""ScriptedModel: a fake model with scripted replies, for unit tests of the synth control flow
(regeneration loop, end signal, filters, resuming). Real-model tests use the embedded model or
the llama.cpp server instead."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from convoscope.models import GenerateRequest, Generation


def role_of(request: GenerateRequest) -> str:
    """Which agent a request comes from, read from its system prompt."""
    system = request.messages[0].content if request.messages else (request.prompt or "")
    if "opening message" in system or " to start a chat with a chatbot" in system:
        return "user-first"
    if "play a person chatting" in system or "between a person in" in system:
        return "user-next"
    if "simulated human user" in system:
        return "judge"
    if "swap roles" in system:
        return "role"
    if system.startswith("A program plays a person"):
        return "check"
    return "chatbot"


class ScriptedModel:
    """Answers every request with ``reply(request)``; raises it when the reply is an exception.

    Records each request; ``delay_s`` makes calls overlap so concurrency can be observed.
    """

    def __init__(self, reply: Callable[[GenerateRequest], str | Exception], *, name: str = "scripted",
                 delay_s: float = 0.0) -> None:
        self._reply = reply
        self._name = name
        self.delay_s = delay_s
        self.requests: list[GenerateRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def name(self) -> str:
        return f"scripted:{self._name}"

    async def generate(self, request: GenerateRequest) -> Generation:
        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            answer = self._reply(request)
        finally:
            self.in_flight -= 1
        if isinstance(answer, BaseException):
            raise answer
        return Generation(text=answer, model=self.name, prompt_tokens=10, completion_tokens=3)

    async def aclose(self) -> None:
        return None

    def calls(self, role: str) -> int:
        return sum(1 for request in self.requests if role_of(request) == role)


def agents(user_lines: Callable[[GenerateRequest], str] | None = None,
           judge_says: Callable[[GenerateRequest], str] | None = None,
           bot_says: str = "That sounds lovely, what made you think of it?",
           role_says: str = "No. The user stays a user.") -> ScriptedModel:
    """One scripted model that plays user, judge, chatbot and role checker by request type."""
    def reply(request: GenerateRequest) -> str:
        role = role_of(request)
        if role in ("user-first", "user-next"):
            return user_lines(request) if user_lines else "Any tips for a rainy weekend at home?"
        if role == "judge":
            return judge_says(request) if judge_says else "Yes."
        if role == "role":
            return role_says
        return bot_says
    return ScriptedModel(reply)
