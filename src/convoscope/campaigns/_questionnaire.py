"""Questionnaires before and after the judging (demographics, eligibility, comments), as Potato's
pre- and post-study surveys.

A questionnaire is a YAML list of questions next to campaign.yaml::

    - id: first_language
      text: Is English your first language?
      kind: choice            # choice (one), choices (several), text, number
      choices: [yes, no]
      accept: [yes]           # optional: any other answer screens the participant out
    - id: comments
      text: Anything we should know?
      kind: text
      required: false

Words such as ``yes`` and ``no`` stay text (they are not read as YAML booleans). Answers are
checked on the server and kept as one campaign event per person and part, written once.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from convoscope.campaigns._located import CampaignError, named_error, yaml_line
from convoscope.campaigns._secure import private_file, spreadsheet_safe

Part = Literal["before", "after"]
PARTS: tuple[Part, ...] = ("before", "after")
# What is wrong with one answer (the web app shows each in the annotators' language).
Problem = Literal["required", "not a choice", "not a number", "too long"]
COLUMNS = ["annotator", "part", "question", "answer", "answered_at"]  # one row per answer


class Question(BaseModel):
    """One question of a questionnaire."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_\-]{0,63}$")
    text: str = Field(min_length=1, max_length=2000)
    kind: Literal["choice", "choices", "text", "number"] = "choice"
    choices: tuple[str, ...] = ()
    required: bool = True
    accept: tuple[str, ...] = Field(default=(), description="choice / choices: the answers that let a "
                                                            "participant go on; any other screens them out.")

    @field_validator("choices", "accept", mode="before")
    @classmethod
    def _as_text(cls, values: Any) -> Any:
        return [str(v) for v in values] if isinstance(values, list) else values

    @model_validator(mode="after")
    def _choices_fit_the_kind(self) -> Question:
        if self.kind in ("choice", "choices") and len(self.choices) < 2:
            raise ValueError(f"a {self.kind!r} question needs at least two choices")
        if self.kind in ("text", "number") and (self.choices or self.accept):
            raise ValueError(f"a {self.kind!r} question takes no choices and no accept list")
        unknown = [a for a in self.accept if a not in self.choices]
        if unknown:
            raise ValueError(f"accept names {', '.join(unknown)}, which is not among the choices")
        return self


class _TextLoader(yaml.SafeLoader):
    """YAML without implicit booleans: ``yes`` / ``no`` / ``on`` stay the words people see."""


_TextLoader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def load_questions(path: Path) -> list[Question]:
    """The questions of one questionnaire file; errors name the file, the line and the field."""
    if not path.is_file():
        raise CampaignError(path, "questionnaire file not found next to campaign.yaml")
    text = path.read_text(encoding="utf-8")
    try:
        node, data = yaml.compose(text, Loader=_TextLoader), yaml.load(text, Loader=_TextLoader)  # noqa: S506
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise CampaignError(path, f"not valid YAML: {getattr(error, 'problem', error)}",
                            line=mark.line + 1 if mark else None) from None
    if not isinstance(data, list) or not data:
        raise CampaignError(path, "expected a list of questions")
    questions = []
    for index, entry in enumerate(data):
        try:
            questions.append(Question.model_validate(entry))
        except ValidationError as error:
            named = named_error(error, node.value[index] if node is not None else None, path)
            raise CampaignError(path, named.problem, line=named.line,
                                field=f"{index}.{named.field}" if named.field else str(index)) from None
    seen: set[str] = set()
    for index, question in enumerate(questions):
        if question.id in seen:
            raise CampaignError(path, f"question id {question.id!r} is used twice",
                                line=yaml_line(node, (index, "id")), field=f"{index}.id")
        seen.add(question.id)
    return questions


def check_answers(questions: Sequence[Question], given: Mapping[str, str | Sequence[str]], *,
                  max_chars: int) -> tuple[dict[str, Any], dict[str, Problem]]:
    """The answers to keep, and what is wrong with the others (question id -> problem)."""
    answers: dict[str, Any] = {}
    problems: dict[str, Problem] = {}
    for question in questions:
        raw = given.get(question.id, [])
        values = [raw] if isinstance(raw, str) else list(raw)
        values = [value.strip() for value in values if value.strip()]
        if not values:
            if question.required:
                problems[question.id] = "required"
            continue
        problem, answer = _one_answer(question, values, max_chars)
        if problem is not None:
            problems[question.id] = problem
        else:
            answers[question.id] = answer
    return answers, problems


def _one_answer(question: Question, values: list[str], max_chars: int) -> tuple[Problem | None, Any]:
    if question.kind in ("choice", "choices"):
        if any(value not in question.choices for value in values) or (question.kind == "choice"
                                                                         and len(values) > 1):
            return "not a choice", None
        return None, values[0] if question.kind == "choice" else list(dict.fromkeys(values))
    if question.kind == "number":
        try:
            number = float(values[0])
        except ValueError:
            return "not a number", None
        return (None, number) if abs(number) < 1e9 else ("not a number", None)
    return ("too long", None) if len(values[0]) > max_chars else (None, values[0])


def screened_by(questions: Sequence[Question], answers: Mapping[str, Any]) -> str | None:
    """The first question whose answer is not among those it accepts (None: none screens out)."""
    for question in questions:
        if not question.accept or question.id not in answers:
            continue
        given = answers[question.id]
        chosen = given if isinstance(given, list) else [given]
        if not set(chosen) & set(question.accept):
            return question.id
    return None


def write_answers(rows: Iterable[dict[str, Any]], out: Path) -> int:
    """Questionnaire rows to a .jsonl or .csv file readable by its owner only; returns the count."""
    listed = list(rows)
    with private_file(out) as handle:
        if out.suffix.lower() == ".csv":
            writer = csv.DictWriter(handle, fieldnames=COLUMNS)
            writer.writeheader()
            for row in listed:
                writer.writerow({key: spreadsheet_safe(json.dumps(value, ensure_ascii=False)
                                                       if isinstance(value, list) else value)
                                 for key, value in row.items()})
        else:
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in listed)
    return len(listed)
