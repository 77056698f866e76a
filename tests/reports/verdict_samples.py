"""Hand-written verdict rows for the report tests: small, readable, with known answers.

Dialogue issues: bot-a and bot-b, English and Korean, judged by two models pooled by a panel,
and by two people. Response candidates: three systems plus the ground truth, three people.
KPIs: a panel of two personas with relevance flags, and computed latency / length verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path

ISSUES = ("repetitive", "lacks-empathy")


def row(item_id, criterion, rater, value, **extra):
    base = {"item_id": item_id, "criterion": criterion, "rater": rater, "value": value}
    return {**base, **extra}


def dialogue_issue_rows():
    """bot-b repeats itself in 2 of its 2 English dialogues (both judges say so, with reasons);
    bot-a never does. One Korean bot-a dialogue lacks empathy by the panel's vote."""
    rows = []
    dialogues = [("d1", "bot-a", "en"), ("d2", "bot-a", "en"), ("d3", "bot-b", "en"),
                 ("d4", "bot-b", "en"), ("d5", "bot-a", "ko")]
    for item_id, system, language in dialogues:
        where = {"system": system, "language": language}
        repeats = int(system == "bot-b")
        cold = int(item_id == "d5")
        for judge in ("model:a", "model:b"):
            reason = f"<b>{system}</b> says the same thing twice" if repeats else "no repetition"
            rows.append(row(item_id, "repetitive", judge, repeats, reason=reason, **where))
            rows.append(row(item_id, "lacks-empathy", judge, cold if judge == "model:a" else 0,
                            reason="ignores the user's grief" if cold and judge == "model:a" else "fine",
                            **where))
            rows.append(row(item_id, "overall", judge, 2 if repeats else 4, **where))
        rows.append(row(item_id, "repetitive", "panel:majority", repeats, **where))
        rows.append(row(item_id, "lacks-empathy", "panel:majority", cold, **where))  # tie -> high
        rows.append(row(item_id, "overall", "panel:majority", 2 if repeats else 4, **where))
        for person in ("human:ann", "human:bo"):
            rows.append(row(item_id, "repetitive", person, repeats if person == "human:ann" else 0,
                            reason="looping", **where))
    return rows


def candidate_rows():
    """Three people judge appropriateness of four candidates for context c1."""
    rows = []
    answers = {  # system -> (ann, bo, cy) for appropriateness; None = I don't know
        "ground-truth": (1, 1, 1),
        "bot-a": (1, 0, 1),
        "bot-b": (0, 0, None),
        "bot-c": (0, 1, 0),
    }
    options = {"bot-a": ("incoherence",), "bot-b": ("incoherence",), "bot-c": ()}
    for system, votes in answers.items():
        for person, value in zip(("human:ann", "human:bo", "human:cy"), votes, strict=True):
            extra = {"unscored_reason": "idk"} if value is None else {}
            chosen = options.get(system, ()) if value == 0 else ()
            rows.append(row(f"c1-{system}", "appropriateness", person, value, system=system,
                            language="en", options=list(chosen), **extra))
    return rows


def kpi_rows():
    """follow-up on turns t1..t4 by two personas (panel max-vote) and latency on t1..t3."""
    rows = []
    plan = {  # item -> ((value, relevant) for persona 1, persona 2)
        "t1": ((1, True), (1, True)),
        "t2": ((0, True), (1, True)),
        "t3": ((1, False), (0, False)),
        "t4": ((1, True), (1, True)),
    }
    for item_id, pair in plan.items():
        for (value, relevant), judge in zip(pair, ("model:m#brand", "model:m#strict"), strict=True):
            rows.append(row(item_id, "follow-up", judge, value, relevant=relevant, system="assistant"))
        values = [value for value, _ in pair]
        pooled = values[0] if values[0] == values[1] else 0  # max-vote, ties low
        rows.append(row(item_id, "follow-up", "panel:majority", pooled, system="assistant"))
    for item_id, seconds in (("t1", 1.2), ("t2", 3.5), ("t3", 0.8)):
        rows.append(row(item_id, "low-latency", "metric:latency", int(seconds <= 2.0), system="assistant",
                        raw=json.dumps({"seconds": seconds, "max_seconds": 2.0})))
    return rows


def write_rows(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path
