"""Issue 26 obs. 7 and issue 28: user turns that a rule refuses before any judge call, in every
seed language — speaker labels, role breaks ("As an AI …"), markup and symbol soup, and text
the project's gibberish filter calls gibberish — with the rule and its reason in the attempt log.

Synthetic turns written for these tests; the scripted model (``synth_scripted``) only replays
them, so what is tested is the rule, not a model."""

from __future__ import annotations

import pytest
from synth_scripted import agents

from convoscope.synth import SynthSettings, clean_user_text, opening_turn, rule_failure, sample_contexts

SEED_LANGUAGES = ("en", "ko", "pt", "es", "ja", "zh")
CONTEXTS = {language: sample_contexts(1, [language], seed=3)[0] for language in SEED_LANGUAGES}

# One ordinary user message per language: every rule must let it through.
GOOD = {
    "en": ["Any tips for keeping basil alive on a sunny windowsill?", "ok thanks, I'll try that!",
           "My human resources manager said no, what now?"],
    "ko": ["요즘 잠이 잘 안 와요. 자기 전에 뭘 하면 좋을까요?", "아 그렇군요, 고마워요!",
           "2022년 3월에 이사했어요."],
    "pt": ["Ando dormindo mal ultimamente. O que dá pra fazer antes de deitar?", "Valeu, vou tentar.",
           "Obrigada!", "kkkk adorei a ideia"],
    "es": ["Últimamente duermo fatal, ¿qué puedo hacer antes de acostarme?", "Vale, lo pruebo.",
           "¿En serio?", "jajaja vale"],
    "ja": ["最近よく眠れないんですが、寝る前に何をしたらいいですか？", "なるほど、ありがとう！"],
    "zh": ["最近总是睡不好，睡前做点什么比较好？", "好的，谢谢你！"],
}

# Observed (issue 26, obs. 7): a user turn that carries a speaker label, its own or the chatbot's.
LABELLED = {
    "en": ["chatbot: Sure, here are three tips for your basil.", "Sounds good! User: what about mint?",
           "I see. Assistant: happy to help with that."],
    "ko": ["챗봇: 네, 도와드릴게요.", "좋아요. 사용자: 그럼 민트는요?"],
    "pt": ["Chatbot: Claro, aqui vão algumas dicas.", "Entendi. Usuário: e a hortelã?"],
    "es": ["Asistente: Claro, aquí tienes unos consejos.", "Vale. Usuario: ¿y la menta?"],
    "ja": ["チャットボット：はい、お手伝いします。", "なるほど。ユーザー：ミントはどう？"],
    "zh": ["聊天机器人：好的，我来帮你。", "明白了。用户：那薄荷呢？"],
}

# Observed (issue 26, obs. 7): the simulated user stepping out of its role.
ROLE_BREAKS = {
    "en": ["As an AI, I don't really have a garden of my own.",
           "I'm just a language model, but basil likes sun.",
           "Great question! How can I help you today?"],
    "ko": ["저는 AI라서 정원이 없어요.", "인공지능으로서 말씀드리면 바질은 햇빛을 좋아해요.",
           "무엇을 도와드릴까요?"],
    "pt": ["Como uma IA, eu não tenho jardim.", "Sou um modelo de linguagem, mas posso opinar.",
           "Em que posso ajudar hoje?"],
    "es": ["Como IA, no tengo un jardín propio.", "Soy un asistente virtual y no tengo plantas.",
           "¿En qué puedo ayudarte hoy?"],
    "ja": ["AIとして、私には庭がありません。", "私は言語モデルなので植物は育てません。",
           "何かお手伝いできることはありますか？"],
    "zh": ["作为一个人工智能，我没有花园。", "我是一个语言模型，不会养花。", "有什么可以帮你的吗？"],
}

# Observed (issue 28): what SmolLM2 wrote for a Korean user, and what Gemma wrote through a chat
# template it was never trained on.
SYMBOL_SOUP = ["🌱 안우란자야 **🌱** ☎****** [무사 듯!!1000 #8** #2022*🌱**", "🌱 **🌱**",
               "<IMG SRC='https://i.pinimg.com/originals/85/9/26/859.jpg'>", "<<INST]<<INST] <<INST]"]

# Gibberish the project's filter refuses: its English and Korean models, language-neutral rules
# in the languages it has no model for.
GIBBERISH = {
    "en": "asdf jkl qwer zxcv poiu lkjh",
    "ko": "ㅁㄴㅇㄹ ㅁㄴㅇㄹㅇ ㅂㅈㄷㄱ ㅋㅌㅊㅍ",
    "pt": "qwertyuiop asdfghjkl zxcvbnm, o que acha disso?",
    "es": "asdfghjklñ qwertyuiop zxcvbnm ¿qué opinas de esto?",
    "ja": "ああああああああああああああ",
    "zh": "啊啊啊啊啊啊啊啊啊啊啊啊",
}


def failure(text: str, language: str, **options) -> tuple[str, str] | None:
    return rule_failure(text, opening=options.pop("opening", False), end_signal="END_OF_DIALOGUE",
                        language=language, **options)


@pytest.mark.parametrize("language", SEED_LANGUAGES)
def test_ordinary_messages_pass_every_rule(language):
    for text in GOOD[language]:
        assert failure(text, language) is None, text


@pytest.mark.parametrize("language", SEED_LANGUAGES)
def test_speaker_labels_are_refused_in_every_seed_language(language):
    for text in LABELLED[language]:
        found = failure(clean_user_text(text), language)
        assert found is not None and found[0] == "speaker_label", text
        assert "label" in found[1]


@pytest.mark.parametrize("language", SEED_LANGUAGES)
def test_role_breaks_are_refused_in_every_seed_language(language):
    for text in ROLE_BREAKS[language]:
        found = failure(text, language)
        assert found is not None and found[0] == "role_break", text


def test_the_users_own_label_at_the_start_is_a_wrapper_and_is_stripped_in_every_language():
    assert clean_user_text('User: "Any advice on sourdough?"') == "Any advice on sourdough?"
    assert clean_user_text("사용자: 빵 굽는 팁 있어요?") == "빵 굽는 팁 있어요?"
    assert clean_user_text("Usuário: Alguma dica de pão?") == "Alguma dica de pão?"
    assert clean_user_text("用户：有做面包的建议吗？") == "有做面包的建议吗？"


@pytest.mark.parametrize("text", SYMBOL_SOUP)
def test_symbol_soup_and_markup_are_refused(text):
    found = failure(text, "ko")
    assert found is not None and found[0] in ("symbols", "markup", "gibberish"), text


@pytest.mark.parametrize("language", SEED_LANGUAGES)
def test_the_gibberish_filter_refuses_gibberish_in_every_seed_language(language):
    found = failure(GIBBERISH[language], language)
    assert found is not None and found[0] == "gibberish", GIBBERISH[language]
    assert "gibberish" in found[1]


async def test_rule_refusals_reach_the_attempt_log_and_spend_no_judge_call():
    """Observed (issue 28): three judge calls spent on symbol soup the rules could refuse."""
    lines = iter([SYMBOL_SOUP[0], "ㅁㄴㅇㄹ ㅁㄴㅇㄹㅇ ㅂㅈㄷㄱ ㅋㅌㅊㅍ", "챗봇: 네, 도와드릴게요.",
                  "저는 AI라서 정원이 없어요.", "요즘 잠이 잘 안 와요. 자기 전에 뭘 하면 좋을까요?"])
    model = agents(user_lines=lambda request: next(lines))
    log, usage, error = await opening_turn(CONTEXTS["ko"], user=model, judge=model,
                                           settings=SynthSettings(), key="k")
    assert error is None and log.accepted
    assert [a.rule for a in log.attempts] == ["symbols", "gibberish", "speaker_label", "role_break", None]
    assert [a.checked_by for a in log.attempts] == ["rule"] * 4 + ["judge"]
    assert "incomplete_syllables" in log.attempts[1].feedback
    assert model.calls("judge") == 1 and usage.roles["judge"].calls == 1


def test_an_echo_of_the_chatbot_or_a_near_copy_of_an_earlier_message_is_a_repeat():
    """Seen in the six-language run: the base-model user echoed the chatbot's last line."""
    chatbot = "방은 지상이에요. 집 옆에는 주차하고 있어요."
    found = failure("집은 지상이에요. 집 옆에는 주차하고 있어요.", "ko", earlier=["주차 문제예요", chatbot])
    assert found is not None and found[0] == "repeat" and "nearly copies" in found[1]
    assert failure("I live in the suburbs.", "en", earlier=["I live in the suburbs!"])[0] == "repeat"
    assert failure("ok thanks!", "en", earlier=["ok thanks"]) is not None  # word for word, however short
    assert failure("ok thank you", "en", earlier=["ok thanks"]) is None  # short: may recur in other words
    assert failure("Do you live in the city centre?", "en", earlier=["Do you like the city?"]) is None
