"""Rules that refuse a simulated user turn without a model call, each under a name.

They run on every attempt before the judge: emptiness, placeholders, an end signal in the
opening, copied prompt labels, speaker labels, role breaks, symbol soup and markup, the project's
gibberish filter, a cut-off message, length, a repeat, and another language. The first that fires
names the attempt's ``rule`` and writes its ``feedback`` (which the next try is shown).

The gibberish filter (:mod:`convoscope.filters`) has models for English and Korean; elsewhere it
applies its language-neutral rules to text it identifies as another language. A short Latin-script
message may not be identifiable and then meets the English model: in a context that is not
English, only the English *character* statistics count then (they catch keyboard mashes), never
the English word list, which knows no Portuguese or Spanish words.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Sequence
from difflib import SequenceMatcher

from convoscope.filters import GibberishResult, LanguageChoice, detect
from convoscope.items import Turn
from convoscope.synth import _patterns as patterns
from convoscope.synth._filters import check_user_language

_LANGUAGE_MIN_CHARS = 25  # shorter texts are too short to identify reliably
_PLACEHOLDER = re.compile(r"\bPerson\s?[XYZ]\b|\[(?:name|user|person)\]|<(?:name|user)>", re.IGNORECASE)
_PROMPT_LABEL = re.compile(r"\W*(?:situation|person|how they feel|gender|language|conversation so far|"
                           r"(?:the )?user'?s next message|opening message)\s*(?:is)?\s*:", re.IGNORECASE)


def rule_failure(text: str, *, opening: bool, end_signal: str, language: str | None = None,
                 earlier: Sequence[str] = (), max_words: int | None = None, cut: bool = False,
                 examples: Sequence[str] = ()) -> tuple[str, str] | None:
    """(rule, feedback) for the first rule the attempt fails, or None when every rule passes.

    ``cut``: the token limit cut the message with no whole sentence to keep; ``max_words``: the
    longest message allowed; ``earlier``: the dialogue's earlier messages, both sides (a repeat
    or a near copy is refused);
    ``language``: the context's language (gibberish filter, and a message of 25 characters or
    more confidently in another language is refused); ``examples``: example messages the model
    was shown, which it must not copy."""
    bare = text.replace(end_signal, "").strip()
    if not bare:
        return None if not opening and end_signal in text else ("empty", "the message is empty")
    for rules in (_form, _role):
        found = rules(bare, text, opening=opening, end_signal=end_signal)
        if found is not None:
            return found
    if language is not None and (reason := gibberish_reason(bare, language)) is not None:
        return "gibberish", reason
    if cut:
        return "cut", "it was cut off at the length limit: write one or two short sentences"
    if max_words is not None and (count := len(bare.split())) > max_words:
        return "too_long", f"it is too long ({count} words): write one or two short sentences"
    if (repeated := _repeat(bare, earlier)) is not None:
        return "repeat", repeated
    if _normalised(bare) in {_normalised(line) for line in examples}:
        return "copied_example", "it copies an example message instead of writing a new one"
    if language is not None and len(bare) >= _LANGUAGE_MIN_CHARS:
        identified = check_user_language([Turn(speaker="user", text=bare)], language)
        if not identified.passed:
            found_in = f"in '{identified.detected}'" if identified.detected else "in another writing system"
            return "language", (f"it is written {found_in}, not in the language of the situation "
                                f"('{language}')")
    return None


def rule_feedback(text: str, *, opening: bool, end_signal: str, language: str | None = None,
                  earlier: Sequence[str] = (), max_words: int | None = None, cut: bool = False
                  ) -> str | None:
    """The feedback of :func:`rule_failure`, or None when the rules pass the attempt."""
    found = rule_failure(text, opening=opening, end_signal=end_signal, language=language,
                         earlier=earlier, max_words=max_words, cut=cut)
    return found[1] if found else None


def _form(bare: str, text: str, *, opening: bool, end_signal: str) -> tuple[str, str] | None:
    """Placeholders, an end signal in the opening, copied prompt labels, symbols, markup."""
    if _PLACEHOLDER.search(text):
        return "placeholder", "it uses a placeholder instead of a real name or a pronoun"
    if opening and end_signal in text:
        return "end_in_opening", "the opening message cannot end the conversation"
    if _PROMPT_LABEL.match(bare):
        return "prompt_label", "it copies a label from the instructions instead of writing the message itself"
    if patterns.mostly_symbols(bare):
        return "symbols", "it is mostly symbols or emoji, not words: write a plain sentence"
    if (found := patterns.markup(bare)) is not None:
        return "markup", f"it contains formatting nobody types in a chat ({found!r}): write plain text"
    return None


def _role(bare: str, text: str, *, opening: bool, end_signal: str) -> tuple[str, str] | None:
    """Speaker labels and role breaks: the user writes a transcript or speaks as the assistant."""
    if (label := patterns.speaker_label(bare)) is not None:
        return "speaker_label", (f"it contains a speaker label ({label!r}): write only the person's "
                                 "own message, without labels or the chatbot's part")
    if (words := patterns.role_break(bare)) is not None:
        return "role_break", (f"it steps out of the person's role ({words!r}): the person is a human "
                              "user asking or reacting, never an AI or an assistant")
    return None


def gibberish_reason(text: str, language: str) -> str | None:
    """Why the project's gibberish filter refuses the text in a context of ``language``, or None."""
    result = filter_verdict(text, language)
    if result is None or not result.gibberish:
        return None
    return f"it reads as gibberish ({', '.join(result.reasons)}): write real words in plain sentences"


def filter_verdict(text: str, language: str) -> GibberishResult | None:
    """The gibberish filter's verdict as it applies in a context of ``language`` (None: the verdict
    does not apply, see the module's note on short Latin-script text)."""
    declared = language if language in typing.get_args(LanguageChoice) else "auto"
    result = detect(text, lang=declared)
    if declared != "auto" or result.lang != "en" or not result.gibberish:
        return result
    if "low_likelihood" in result.reasons:  # the character statistics, not the English word list
        return result.model_copy(update={"reasons": ("low_likelihood",)})
    return None


_NEAR_COPY = 0.85  # difflib ratio from which a message is a near copy of an earlier one
_NEAR_COPY_MIN_CHARS = 12  # shorter messages ("ok thanks") may well recur


def _repeat(text: str, earlier: Sequence[str]) -> str | None:
    """A word-for-word repeat of an earlier message, or a near copy (small models echo the
    chatbot's last line with a word changed)."""
    mine = _normalised(text)
    before = [_normalised(line) for line in earlier]
    if mine in before:
        return "it repeats an earlier message word for word"
    if len(mine) >= _NEAR_COPY_MIN_CHARS and any(
            SequenceMatcher(None, mine, line).ratio() >= _NEAR_COPY for line in before):
        return "it nearly copies an earlier message: write something new"
    return None


def _normalised(text: str) -> str:
    return patterns.normalised(text)
