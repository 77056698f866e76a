"""Follow-up questions that ask for what an answer lacks (seed 000's adaptive-survey idea).

Templates keyed by the weakest dimension serve the embedded model, which is too small to write
a useful question; a capable judge writes its own, in the answer's language. Templates exist in
English and Korean; for any other language without a capable judge the English template is used
and the source says so. The output says which source was used.
"""

from __future__ import annotations

from convoscope.models import GenerateRequest, Message, Model, ModelError

_TEMPLATES: dict[str, dict[str | None, str]] = {
    "en": {
        None: "Could you answer the question again in a sentence or two of your own words?",
        "effort": "Could you tell us a bit more, for example a specific detail or moment that stood out?",
        "relevance": "Could you tell us how your answer relates to the question we asked?",
        "completeness": "Is there any part of the question you haven't covered yet? We'd love to hear it.",
    },
    "ko": {
        None: "질문에 대해 한두 문장으로 다시 답해 주시겠어요?",
        "effort": "조금 더 자세히 말씀해 주시겠어요? 특히 기억에 남는 점이 있다면 알려 주세요.",
        "relevance": "답변이 질문과 어떤 관련이 있는지 말씀해 주시겠어요?",
        "completeness": "질문 중에 아직 답하지 않으신 부분이 있을까요? 그 부분도 알려 주세요.",
    },
}


def follow_up_for(weakest: str | None, language: str | None) -> tuple[str, str]:
    """A follow-up question and its source, ``template:<weakest>``. ``weakest`` is a dimension,
    "gibberish" or None (nothing scored); the last two get a plain request to answer again."""
    code = (language or "en").split("-")[0].lower()
    source = f"template:{weakest or 'general'}"
    if code not in _TEMPLATES and code not in ("none", "other", "und"):
        source += f" (in English: no {code} template; a capable --judge writes it in {code})"
    table = _TEMPLATES.get(code, _TEMPLATES["en"])
    return table[weakest if weakest in table else None], source


_ASK = ("A respondent answered an open-ended survey question. A reviewer found the answer weakest "
        "on {weakest} ({reason}). Write ONE short, friendly follow-up question, in the "
        "language of the answer, that asks the respondent for exactly what is missing. Reply "
        "with the question only.\n\nQuestion: {question}\nAnswer: {answer}")


async def model_follow_up(model: Model, *, question: str | None, answer: str, weakest: str,
                          reason: str | None, language: str | None) -> tuple[str, str]:
    """A follow-up written by a capable model; any failure or empty reply falls back to the
    template, and the source says so (failures are data, not exceptions)."""
    request = GenerateRequest(max_tokens=80, messages=(Message(role="user", content=_ASK.format(
        weakest=weakest, reason=reason or "no reason given", question=question or "(none)",
        answer=answer)),))
    try:
        text = (await model.generate(request)).text.strip().splitlines()
    except ModelError as error:
        fallback, source = follow_up_for(weakest, language)
        return fallback, f"{source} (model failed: {str(error)[:80]})"
    if not text or not text[0].strip():
        fallback, source = follow_up_for(weakest, language)
        return fallback, f"{source} (model gave no question)"
    return text[0].strip().strip('"'), f"model:{model.name}"
