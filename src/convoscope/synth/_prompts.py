"""The prompts of the simulated user, its judge, the chatbots and the role-reversal check.

Written for convoscope after the roles described in seed 001 (appendix C, tables 5-7). The
context is kept in English and the user is asked to write in the target language, adapting the
scene to its country, rather than translating English dialogues afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import yaml

from convoscope.items import Turn
from convoscope.synth._contexts import SeedContext

DEFAULT_END_SIGNAL = "END_OF_DIALOGUE"

USER_FIRST_SYSTEM = """\
You write the opening message that a real person types to a chatbot. You are given a small \
everyday situation, who the person is, how they feel, sometimes their gender, and the language \
and country they write from.

Rules for the message:
- One or two short sentences in casual, everyday language, the way people type to a chatbot.
- Ask for advice, an opinion or some information, or share a thought and ask about it.
- The chatbot is a program: do not treat it as a friend you know, and do not ask about its \
family, body, memories or feelings.
- Let the person's age, mood, background and culture show in the wording; adapt the situation \
to their country.
- Use the situation's gist without copying its sentence.
- Never write placeholders such as PersonX or [name]; use a real name or a pronoun.
- Where the language needs the speaker's gender, use the gender given.
- Write only the message itself, in the requested language: no quotes, no labels such as \
"User:", no comments."""

USER_NEXT_SYSTEM = """\
You play a person chatting online with a chatbot. Write the person's next message.

Rules:
- Stay the person: never say or imply that you are an AI, and do not start helping the chatbot.
- One or two short, plain sentences that follow from the conversation and the situation.
- Do not repeat what was already said, and do not open every message the same way (for \
example always thanking and then asking).
- Where the language needs the speaker's gender, use the gender given.
- Write in the language of the situation. Never write placeholders such as PersonX.
- When the conversation has reached its natural end, write {end} (you may put a short goodbye \
before it). Do not drag the conversation on.
- If feedback on an earlier attempt is given, fix what it points out.
- Write only the message itself: no quotes, no labels, no comments."""

JUDGE_SYSTEM = """\
You check one message written by a simulated human user: the last user message in the \
conversation below. Accept it only if all of these hold:
- It sounds like a real person typing in an everyday online chat.
- It is short (one or two sentences), consistent with what came before, and not a repeat of \
earlier messages, their wording or their structure.
- It stays in the user's role: it may ask for advice or information, but it does not give advice, \
comfort or probing questions the way an assistant would, and it never admits being an AI.
- It is written in {language}.
- If it contains {end}, the conversation really has come to a natural close.
Answer "Yes." if the message passes, or "No." followed by one short sentence saying what to fix."""

CHATBOT_SYSTEM = """\
You are a chatbot having a casual conversation online. Keep it flowing and pleasant.
- Reply in the user's language, in natural and clear everyday words.
- Keep replies short: one or two easy sentences that fit what was said.
- Do not push the conversation towards a task or a lecture; no lists or bullet points.
- Match the mood of the conversation, and now and then ask something or bring in something new \
so it stays lively and does not repeat itself."""

ROLE_CHECK_SYSTEM = """\
Below is a conversation between a user and a chatbot. The user side was written by a program \
that was told to play a human user. Did the user side, in any message, swap roles and act as \
the assistant: answering its own questions, giving the chatbot advice or support, or saying it \
is an AI? Answer "Yes." or "No." followed by one short sentence."""


def describe_context(context: SeedContext) -> str:
    """The seed context as the user agent reads it (always in English)."""
    lines = [f"Situation: {context.scene}", f"Person: {context.persona}",
             f"How they feel: {context.affect}"]
    if context.gender:
        lines.append(f"Gender: {context.gender}")
    lines.append(f"Language: {context.language_name}, writing from {context.country}")
    return "\n".join(lines)


def render_dialogue(turns: Sequence[Turn]) -> str:
    return "\n".join(f"{turn.speaker}: {turn.text}" for turn in turns) or "(no messages yet)"


def first_turn_prompt(context: SeedContext, rejected: str | None, feedback: str | None) -> str:
    parts = [describe_context(context), f"Write the opening message in {context.language_name}."]
    parts.extend(_retry_note(rejected, feedback))
    return "\n\n".join(parts)


def next_turn_prompt(context: SeedContext, turns: Sequence[Turn], rejected: str | None,
                     feedback: str | None) -> str:
    parts = [describe_context(context), f"Conversation so far:\n{render_dialogue(turns)}",
             f"Write the user's next message in {context.language_name}."]
    parts.extend(_retry_note(rejected, feedback))
    return "\n\n".join(parts)


def _retry_note(rejected: str | None, feedback: str | None) -> list[str]:
    if rejected is None:
        return []
    return [f"An earlier attempt was rejected:\n{rejected}",
            f"Feedback on it: {feedback or 'not good enough; try again.'}"]


def shorten(text: str, words: int) -> str:
    """At most ``words`` words of a rejected attempt, with how long it was when cut: the next try
    needs to see what went wrong, not to re-read (and pay for) a rambling attempt whole.
    Texts without spaces (Chinese, Japanese) are cut at four characters a word."""
    parts = text.split()
    if len(parts) > 1 and len(parts) > words:
        return " ".join(parts[:words]) + f" … (cut; {len(parts)} words in all)"
    if len(parts) <= 1 and len(text) > 4 * words:
        return text[: 4 * words] + f" … (cut; {len(text)} characters in all)"
    return text


def judge_prompt(turns: Sequence[Turn], candidate: str) -> str:
    shown = [*turns, Turn(speaker="user", text=candidate)]
    return f"Conversation:\n{render_dialogue(shown)}\n\nIs the last user message acceptable?"


def role_check_prompt(turns: Sequence[Turn]) -> str:
    return f"Conversation:\n{render_dialogue(turns)}\n\nDid the user side act as the assistant?"


# Base models (no chat training) get a document to continue instead of instructions: a header,
# examples in the target language, then the dialogue, ending where the next message begins.
# Speaker names double as stop strings, so a model that goes on to write the other side stops.
PERSON, CHATBOT = "Person", "Chatbot"
DOCUMENT_STOP = ("\n", f"{PERSON}:", f"{CHATBOT}:")


@cache
def _examples() -> dict[str, Any]:
    text = resources.files("convoscope.synth").joinpath("data/user_examples.yaml").read_text("utf-8")
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def example_messages(language: str) -> tuple[str, ...]:
    """The example user messages a base model is shown in ``language`` (none when it has none)."""
    examples = _examples()
    exchange = examples["exchanges"].get(language, [])
    return (*examples["openings"].get(language, []), *exchange[1:])


def _situation(scene: str, persona: str, affect: str, gender: str | None = None) -> str:
    # Gender as plain words: a base model copied a bracketed "(male)" into its message.
    who = persona.rstrip(".")
    if gender:
        who = f"a {'woman' if gender == 'female' else 'man'}, {who[:1].lower()}{who[1:]}"
    return f"Situation: {scene} Person: {who}, feeling {affect}."


def _context_line(context: SeedContext) -> str:
    return _situation(context.scene, context.persona, context.affect, context.gender)


def first_turn_document(context: SeedContext) -> str:
    """The opening message as a base model writes it: a list of openings, then this context's."""
    examples = _examples()
    openings = examples["openings"].get(context.language, [])
    parts = [f"Messages that people in {context.country} typed in {context.language_name} to start a chat "
             "with a chatbot: one or two casual sentences asking for advice, an opinion or information."]
    parts.extend(f"{_situation(**situation)}\nMessage: {opening}"
                 for situation, opening in zip(examples["situations"], openings, strict=False))
    parts.append(f"{_context_line(context)}\nMessage:")
    return "\n\n".join(parts)


def _chat_lines(turns: Sequence[Turn]) -> list[str]:
    return [f"{PERSON if turn.speaker == 'user' else CHATBOT}: {turn.text}" for turn in turns]


def _example_chat(language: str, *, with_reply: bool) -> list[str]:
    examples = _examples()
    openings, exchange = examples["openings"].get(language), examples["exchanges"].get(language)
    if not openings or not exchange:
        return []
    lines = [f"{PERSON}: {openings[0]}", f"{CHATBOT}: {exchange[0]}"]
    return [*lines, f"{PERSON}: {exchange[1]}"] if with_reply else lines


def next_turn_document(context: SeedContext, turns: Sequence[Turn]) -> str:
    """A later user message as a base model writes it: an example chat, then this one."""
    header = (f"Chats in {context.language_name} between a person in {context.country} and a chatbot. "
              "The person writes short, casual messages: asks, reacts, or says goodbye.")
    example = _example_chat(context.language, with_reply=True)
    situation = _examples()["situations"][0]
    parts = [header]
    if example:
        parts.append("\n".join([_situation(**situation), *example]))
    parts.append("\n".join([_context_line(context), *_chat_lines(turns), f"{PERSON}:"]))
    return "\n\n".join(parts)


def chatbot_document(turns: Sequence[Turn], language: str | None) -> str:
    """A chatbot reply as a base model writes it: the shared header, an example exchange in the
    dialogue's language, then the dialogue (never the user's context)."""
    header = ("Chats between people and a friendly chatbot. The chatbot answers in the person's "
              "language, in one or two short and natural sentences.")
    example = _example_chat(language or "en", with_reply=False)
    parts = [header, *(["\n".join(example)] if example else [])]
    parts.append("\n".join([*_chat_lines(turns), f"{CHATBOT}:"]))
    return "\n\n".join(parts)
