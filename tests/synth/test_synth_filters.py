"""The two post-generation filters: user language (offline identification) and role reversal."""

from __future__ import annotations

import pytest
from synth_scripted import agents

from convoscope.items import Turn
from convoscope.synth import SynthSettings, Usage, check_user_language, filter_dialogue
from convoscope.synth import _filters as filters_module

PT_USER = [Turn(speaker="user",
                text="Olá! Estou pensando em começar a correr, mas não sei por onde começar."),
           Turn(speaker="chatbot", text="Que ótimo! Comece devagar, com caminhadas rápidas."),
           Turn(speaker="user", text="Boa ideia, vou tentar amanhã de manhã antes do trabalho.")]
PT_USER_DRIFTS = [PT_USER[0], PT_USER[1],
                  Turn(speaker="user", text="Thanks, that sounds like a good plan for the next few weeks.")]
KO_USER_IN_ENGLISH = [Turn(speaker="user", text="I have been feeling tired after work lately, any advice?"),
                      Turn(speaker="chatbot", text="요즘 많이 피곤하시군요. 잠은 충분히 주무세요?")]


def test_py3langid_passes_the_right_language_and_catches_a_drift():
    pytest.importorskip("py3langid")
    assert check_user_language(PT_USER, "pt").passed
    drift = check_user_language(PT_USER_DRIFTS, "pt")
    assert not drift.passed and drift.method == "py3langid" and drift.off_turns == (1,)
    korean = check_user_language(KO_USER_IN_ENGLISH, "ko")
    assert not korean.passed and korean.detected == "en"


def test_without_py3langid_only_the_script_is_checked(monkeypatch):
    monkeypatch.setattr(filters_module, "has_language_identifier", lambda: False)
    korean = check_user_language(KO_USER_IN_ENGLISH, "ko")
    assert not korean.passed and korean.method == "script" and "py3langid" in korean.note
    # Portuguese drifting into English is the same script: this fallback cannot see it.
    assert check_user_language(PT_USER_DRIFTS, "pt").passed


def test_the_chatbot_side_can_be_checked_too():
    pytest.importorskip("py3langid")
    assert check_user_language(KO_USER_IN_ENGLISH, "ko", speaker="chatbot").passed


async def test_role_reversal_is_flagged_by_the_judge_and_kept_with_its_reason():
    swapped = agents(role_says="Yes. The user gives the chatbot advice like an assistant would.")
    result = await filter_dialogue(PT_USER, "pt", judge=swapped, settings=SynthSettings(), usage=Usage(),
                                   key="k")
    assert not result.passed and result.reasons == ("role_reversal",)
    assert "advice" in result.role_feedback
    fine = await filter_dialogue(PT_USER, "pt", judge=agents(), settings=SynthSettings(), usage=Usage(),
                                 key="k")
    assert fine.passed and fine.reasons == ()


async def test_both_filters_can_fire_and_the_role_check_can_be_skipped():
    pytest.importorskip("py3langid")
    swapped = agents(role_says="Yes.")
    both = await filter_dialogue(PT_USER_DRIFTS, "pt", judge=swapped, settings=SynthSettings(),
                                 usage=Usage(), key="k")
    assert both.reasons == ("user_language", "role_reversal")
    skipped = await filter_dialogue(PT_USER, "pt", judge=swapped,
                                    settings=SynthSettings(check_role=False), usage=Usage(), key="k")
    assert skipped.passed and swapped.calls("role") == 1
    no_judge = await filter_dialogue(PT_USER, "pt", judge=None, settings=SynthSettings(), usage=Usage(),
                                     key="k")
    assert no_judge.passed and "no judge" in no_judge.role_feedback


async def test_a_dialogue_without_chatbot_turns_is_filtered():
    result = await filter_dialogue([], "en", judge=agents(), settings=SynthSettings(), usage=Usage(), key="k")
    assert result.reasons == ("no_dialogue",)
