"""Filters run on a finished dialogue: did the simulated user leave its language, or its role?

Language: py3langid (``convoscope[synth]``; its model ships inside the wheel, nothing is fetched)
identifies the user side as a whole and each user turn long enough to judge. Without it, only the
writing system is checked (Hangul for Korean, Han for Chinese, kana for Japanese, Latin for the
others), which catches a Korean user writing English but not Portuguese turning into Spanish.
Role: the judge model is asked whether the user side acted as the assistant. A judge read in
completion mode is not asked: a tiny model's bare yes/no there is noise (it favours one answer
whatever the dialogue), and each user turn already met the role rules (speaker labels, "as an
AI") and, when the judge could do it on its calibration examples, the ``in_role`` check.

A filtered dialogue is kept, with its reasons, never deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from convoscope.items import Turn
from convoscope.models import EndpointUnreachable, Model, ModelError
from convoscope.synth import _patterns as patterns
from convoscope.synth import _prompts as prompts
from convoscope.synth._agents import SynthSettings, Usage, ask_yes_no, request_seed, uses_completion
from convoscope.text import dominant_script

# Close relatives a short-text identifier confuses; a turn detected as one of them is not counted
# as having left the language.
_NEIGHBOURS = {"pt": {"gl"}, "es": {"gl", "ca", "an", "ast"}, "no": {"nb", "nn", "da"},
               "nb": {"no", "nn", "da"}, "ms": {"id"}, "id": {"ms"}, "hr": {"bs", "sr"},
               "zh": {"wuu", "yue"}, "en": {"pcm", "sco"}}


class LanguageCheck(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    passed: bool
    method: Literal["py3langid", "script"]
    detected: str | None = None
    off_turns: tuple[int, ...] = ()
    note: str | None = None


class FilterResult(BaseModel):
    """``passed`` is False when any check failed; ``reasons`` names them (``user_language``,
    ``role_reversal``, ``no_dialogue``, ``symbol_soup``, ``echo``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    passed: bool
    reasons: tuple[str, ...] = ()
    language: LanguageCheck | None = None
    role_feedback: str | None = None


@cache
def _identifier() -> Any:
    from py3langid import langid

    model = Path(langid.MODEL_FILE)
    path = model if model.is_absolute() else Path(langid.MODEL_DIR) / model
    return langid.LanguageIdentifier.from_modelpath(path, norm_probs=True)


def has_language_identifier() -> bool:
    try:
        import py3langid  # noqa: F401
    except ImportError:
        return False
    return True


def check_user_language(turns: Sequence[Turn], language: str, *, speaker: str = "user",
                        min_chars: int = 25, confidence: float = 0.9) -> LanguageCheck:
    """Is one side (``speaker``) written in ``language``? Turns shorter than ``min_chars`` are
    judged only as part of the whole side; a longer turn fails when another language is detected
    with at least ``confidence``."""
    texts = [turn.text for turn in turns if turn.speaker == speaker]
    if not texts:
        return LanguageCheck(passed=True, method="script", note=f"no {speaker} turns")
    if not has_language_identifier():
        return _script_check(texts, language)
    identifier = _identifier()
    accepted = {language, *_NEIGHBOURS.get(language, ())}
    whole, _ = identifier.classify(" ".join(texts))
    off = tuple(index for index, text in enumerate(texts)
                if len(text) >= min_chars and _confidently_other(identifier, text, accepted, confidence))
    passed = whole in accepted and not off
    return LanguageCheck(passed=passed, method="py3langid", detected=whole, off_turns=off)


def _confidently_other(identifier: Any, text: str, accepted: set[str], confidence: float) -> bool:
    detected, probability = identifier.classify(text)
    return detected not in accepted and probability >= confidence


_SCRIPT_OF = {"ko": "HANGUL", "zh": "CJK", "ja": "KANA"}


def _script_check(texts: list[str], language: str) -> LanguageCheck:
    expected = _SCRIPT_OF.get(language, "LATIN")
    off = tuple(index for index, text in enumerate(texts) if _main_script(text) not in (expected, None)
                and not (language == "ja" and _main_script(text) == "CJK"))
    note = "py3langid is not installed (pip install 'convoscope[synth]'): only the script was checked"
    return LanguageCheck(passed=not off, method="script", detected=None, off_turns=off, note=note)


_SCRIPT_NAMES = {"HIRAGANA": "KANA", "KATAKANA": "KANA", "HAN": "CJK", "HANGUL": "HANGUL", "LATIN": "LATIN"}


def _main_script(text: str) -> str | None:
    """The text layer's dominant script, in this check's names (KANA, CJK, HANGUL, LATIN, OTHER)."""
    script = dominant_script(text)
    return None if script == "COMMON" else _SCRIPT_NAMES.get(script, "OTHER")


def dialogue_form(turns: Sequence[Turn]) -> tuple[str, ...]:
    """Reasons a finished dialogue is no conversation, in any script: a turn of symbol soup
    (``symbol_soup``), or a chatbot turn that repeats the user's message word for word (``echo``)."""
    reasons = []
    if any(patterns.mostly_symbols(turn.text) for turn in turns if turn.text.strip()):
        reasons.append("symbol_soup")
    for before, after in zip(turns, turns[1:], strict=False):
        if (before.speaker == "user" and after.speaker == "chatbot" and before.text.strip()
                and patterns.normalised(before.text) == patterns.normalised(after.text)):
            reasons.append("echo")
            break
    return tuple(reasons)


async def check_role(judge: Model, turns: Sequence[Turn], settings: SynthSettings, usage: Usage,
                     *, key: str) -> tuple[bool | None, str]:
    """(user swapped roles?, the judge's explanation). None when the answer is unreadable."""
    return await ask_yes_no(judge, prompts.ROLE_CHECK_SYSTEM, prompts.role_check_prompt(turns), settings,
                            usage, seed=request_seed(settings.seed, key, "role"), role="filter")


async def filter_dialogue(turns: Sequence[Turn], language: str, *, judge: Model | None,
                          settings: SynthSettings, usage: Usage, key: str) -> FilterResult:
    """Both filters on a finished dialogue. A failed role check call is noted, not fatal; without a
    judge model the role is not checked (and the result says so)."""
    if not any(turn.speaker == "chatbot" for turn in turns):
        return FilterResult(passed=False, reasons=("no_dialogue",))
    reasons: list[str] = list(dialogue_form(turns))
    language_check = check_user_language(turns, language)
    if not language_check.passed:
        reasons.append("user_language")
    feedback: str | None = None
    if settings.check_role and judge is None:
        feedback = "role not checked: no judge model"
    elif settings.check_role and judge is not None and uses_completion(judge, settings):
        feedback = ("role not asked of a completion-mode judge: each user turn met the role rules"
                    + (" and the in_role check" if "in_role" in (settings.judge_thresholds or {}) else ""))
    elif settings.check_role and judge is not None:
        try:
            swapped, feedback = await check_role(judge, turns, settings, usage, key=key)
        except EndpointUnreachable:
            raise
        except ModelError as error:
            swapped, feedback = None, f"role check failed: {error}"
        if swapped:
            reasons.append("role_reversal")
    return FilterResult(passed=not reasons, reasons=tuple(reasons), language=language_check,
                        role_feedback=feedback)
