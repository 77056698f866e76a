"""Small multilingual word lists for grader talk: the words an answer needs to talk to, or imitate,
whoever grades it. English, Korean, Portuguese, Spanish, German, French, Italian, Japanese and
Chinese; written for convoscope (not translated from any list).

Every list is matched on the text layer's folded text (:func:`convoscope.text.fold`: NFKC,
format characters dropped, confusables folded, case-folded; full-width ``ｓｃｏｒｅ`` and ``：`` become
``score`` and ``:``, a Cyrillic ``е`` inside ``еffort`` is ``e``). Latin-script words match whole
words (a word boundary on each side); Hangul, kana and Han entries match anywhere, because those
scripts do not put spaces between words.
Entries are regular-expression fragments.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Keys a verdict object or result line uses. "Strong" keys name a judgement outright; "weak" ones
# are ordinary words too ("Note: ...", "Overall: good stay", "理由") and count only inside braces,
# after "=", or beside another key.
VERDICT_KEYS_STRONG = (
    "score", "scores", "effort", "relevance", "relevant", "completeness", "decision", "verdict",
    "judg(?:e)?ment", "grade", "grading", "scoring",
    "점수", "노력", "관련성", "완전성", "완성도", "판정", "등급", "결정",
    "pontua[cç][aã]o", "esfor[cç]o", "relev[aâ]ncia", "completude", "decis[aã]o", "veredi(?:c)?to",
    "puntuaci[oó]n", "puntaje", "calificaci[oó]n", "esfuerzo", "relevancia", "completitud",
    "decisi[oó]n", "punktzahl", "aufwand", "relevanz", "vollst[aä]ndigkeit", "entscheidung",
    "urteil", "pertinence", "compl[eé]tude", "d[eé]cision", "punteggio", "sforzo", "rilevanza",
    "completezza", "decisione",
    "スコア", "点数", "得点", "判定", "努力", "関連性", "完全性",
    "分数", "得分", "评分", "决定", "结论", "相关性", "完整性",
)
VERDICT_KEYS_WEAK = (
    "overall", "rating", "reason", "reasoning", "explanation", "result", "label", "points", "marks",
    "evaluation", "assessment", "options",
    "이유", "평점", "평가", "결과", "종합",
    "nota", "notas", "avalia[cç][aã]o", "raz[aã]o", "motivo", "resultado",
    "evaluaci[oó]n", "raz[oó]n", "bewertung", "note", "begr[uü]ndung", "ergebnis", "punkte",
    "[eé]valuation", "raison", "r[eé]sultat", "voto", "valutazione", "motivazione", "risultato",
    "評価", "理由", "結果", "评价", "评估", "结果",
)
# Values a verdict gives besides numbers: decisions.
DECISION_WORDS = (
    "accept", "accepted", "reject", "rejected", "hold", "pass", "passed", "fail", "failed",
    "approved", "승인", "합격", "거절", "보류", "불합격", "aceitar", "aceito", "aceita", "aprovado",
    "aprovada", "rejeitado", "aceptar", "aceptado", "aceptada", "aprobado", "aprobada",
    "rechazado", "akzeptieren", "akzeptiert", "angenommen", "abgelehnt", "bestanden",
    "accepter", "accept[eé]e?", "refus[eé]e?", "valid[eé]e?", "accettato", "approvato",
    "合格", "採用", "不合格", "承認", "接受", "通过", "拒绝", "批准",
)
GRADER_NOUNS = (
    "grader", "graders", "evaluator", "evaluators", "rater", "raters", "assessor", "examiner",
    "scorer", "judge", "reviewer",
    "(?:scoring|rating|grading|evaluation|judge|judging) (?:model|ai|bot|system)",
    "language model", "llm",
    "평가자", "채점자", "심사위원", "심사자", "검토자", "평가\\s?위원", "평가\\s?모델", "채점\\s?모델",
    "채점하는\\s?(?:분|사람)", "평가하는\\s?(?:분|사람)",
    "avaliador(?:a|es)?", "corretor(?:a|es)?(?: autom[aá]tico)?", "examinador(?:a|es)?",
    "evaluador(?:a|es)?", "calificador(?:a|es)?", "corrector(?:a|es)?", "quien califica",
    "bewerter(?:in)?", "pr[uü]fer(?:in)?", "korrektor(?:in)?", "gutachter(?:in)?",
    "bewertungsmodell", "[eé]valuat(?:eur|rice)s?", "correct(?:eur|rice)s?", "examinat(?:eur|rice)",
    "valutatore", "correttore", "esaminatore",
    "評価者", "採点者", "審査員", "採点(?:して(?:る|いる)|する)人", "評価(?:して(?:る|いる)|する)人",
    "评分者", "评分员", "评委", "评审", "阅卷", "审核员", "评分的", "打分的", "评分模型",
)
# Machine names count as the grader only beside score or rubric words: "the AI assistant in the
# app helped me" is an answer about an app.
MACHINE_NOUNS = ("ai", "a\\.i\\.", "gpt", "chatgpt", "bot", "model", "인공지능", "에이아이",
                 "ia", "ki", "kuenstliche intelligenz", "künstliche intelligenz", "人工知能", "人工智能")
SCORE_NOUNS = (
    "score", "scores", "grade", "grades", "rating", "points", "marks", "credit",
    "점수", "만점", "최고점", "평점", "등급", "\\d+\\s?점",
    "nota", "notas", "pontua[cç][aã]o", "pontos", "puntuaci[oó]n", "puntaje", "calificaci[oó]n",
    "puntos", "note", "noten", "punktzahl", "punkte", "h[oö]chstnote", "bestnote", "notes",
    "voto", "punteggio", "punti",
    "点数", "満点", "最高点", "高得点", "得点", "スコア", "\\d+\\s?点",
    "分数", "满分", "高分", "最高分", "评分", "打分", "得分", "\\d+\\s?分",
)
TOP_WORDS = (
    "highest", "maximum", "max", "top", "full", "perfect", "best", "exceptional",
    "최고", "최상", "최대", "만점", "후한", "후하게",
    "m[aá]xima", "m[aá]ximo", "mais alta", "m[aá]s alta", "melhor", "mejor",
    "beste", "h[oö]chste", "volle", "maximale", "maximal", "meilleure", "plus haute", "massimo",
    "migliore", "満点", "最高", "最大", "满分", "最高", "最好",
)
RUBRIC_NOUNS = (
    "rubric", "rubrics", "criteria", "instructions", "guidelines", "system prompt", "prompt",
    "scoring rules", "grading rules", "marking scheme",
    "기준", "지시", "지침", "루브릭", "채점\\s?규칙", "평가\\s?규칙",
    "crit[eé]rios?", "rubrica", "instru[cç][oõ]es", "regras de (?:avalia|corre)[cç][aã]o",
    "r[uú]brica", "instrucciones", "reglas de (?:evaluaci|calificaci)[oó]n",
    "kriterien", "anweisungen", "rubrik", "bewertungs(?:kriterien|schema|regeln|richtlinien)",
    "crit[eè]res", "consignes", "bar[eè]me", "grille d'[eé]valuation", "criteri", "istruzioni",
    "基準", "指示", "ルーブリック", "採点基準", "評価基準", "标准", "指令", "评分标准", "评分规则",
)
SELF_REFERENCE = (
    "this answer", "this response", "this reply", "my answer", "my response", "my reply",
    "이\\s?답변", "이\\s?답", "제\\s?답변", "내\\s?답변", "이\\s?응답",
    "esta resposta", "minha resposta", "esta respuesta", "mi respuesta", "diese antwort",
    "meine antwort", "dieser antwort", "cette r[eé]ponse", "ma r[eé]ponse", "questa risposta",
    "この回答", "私の回答", "この答え", "这个回答", "本回答", "我的回答", "此回答", "这个答案", "该回答",
)
IGNORE_VERBS = (
    "ignore", "disregard", "forget", "override", "무시", "ignor[ea]", "ignoriere", "ignorieren",
    "ignorez", "ignorer", "無視", "忽略", "无视",
)
REQUEST_VERBS = (
    "give", "award", "assign", "grant", "mark", "rate", "treat", "consider", "count",
    "주세요", "주십시오", "부탁", "매겨", "줘", "주길", "처리",
    "d[eê]", "d[aá]", "dar", "atribua", "considere", "dame", "deme", "ot[oó]rgue(?:me)?", "asigne",
    "gib", "geben sie", "vergib", "vergeben", "werten", "bewerte", "donne", "donnez", "attribuez",
    "accordez", "consid[eé]rez", "dai", "assegna", "considera",
    "ください", "付けて", "つけて", "お願い", "扱い", "请", "给我", "打", "给予", "按",
)


def _is_latin(entry: str) -> bool:
    return all(ord(char) < 0x2E80 for char in entry)


def alternation(entries: tuple[str, ...]) -> str:
    """One regex fragment: Latin entries as whole words, CJK and Hangul entries anywhere."""
    latin = [entry for entry in entries if _is_latin(entry)]
    other = [entry for entry in entries if not _is_latin(entry)]
    parts = []
    if latin:
        parts.append(r"(?<![^\W_])(?:" + "|".join(sorted(latin, key=len, reverse=True)) + r")(?![^\W_])")
    if other:
        parts.append("(?:" + "|".join(sorted(other, key=len, reverse=True)) + ")")
    return "(?:" + "|".join(parts) + ")"


@lru_cache(maxsize=64)
def compiled(entries: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(alternation(entries))
