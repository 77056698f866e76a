"""The campaign specification (campaign.yaml): what people judge, how work is split, who qualifies."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from convoscope.campaigns._located import CampaignError, named_error, yaml_line
from convoscope.campaigns._questionnaire import load_questions
from convoscope.criteria import Criterion, get_criterion

SPEC_FILE = "campaign.yaml"
PAIRWISE_PREFIX = "pairwise:"  # as convoscope.pairwise names its verdicts
GUIDELINES_FILE = "guidelines.md"
CODE = r"^[A-Za-z0-9_\-]{0,64}$"  # a platform code: letters, digits, '_' and '-'


class Qualification(BaseModel):
    """Who may annotate main batches: Cohen's kappa with each reference annotator and accuracy
    against their majority, each at or above its minimum (see :mod:`convoscope.campaigns._qualify`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    enabled: bool = True
    contexts: int = Field(default=5, ge=1, description="Contexts in the qualification batch.")
    reference_annotators: tuple[str, ...] = Field(
        default=(), description="Annotator ids whose answers are the reference (internal pilot).")
    min_kappa: float = Field(
        default=0.21, ge=-1.0, le=1.0, validation_alias=AliasChoices("min_kappa", "kappa_threshold"),
        description="Cohen's kappa the candidate needs with EACH reference annotator (weighted for "
                    "numeric scales). 'kappa_threshold' is read as this too (seed 003: 0.21).")
    min_accuracy: float = Field(
        default=0.6, ge=0.0, le=1.0,
        description="Share of the candidate's answers that must equal the references' majority answer.")
    max_chance_pass: float = Field(
        default=0.05, ge=0.0, le=1.0,
        description="The most a random answerer may have of matching the references' majority as often as "
                    "the candidate did (one-sided binomial); 1 turns the check off.")
    when_cannot_tell: Literal["refuse", "admit"] = Field(
        default="refuse", description="A candidate who meets the minimums on too few answers to tell "
                                      "from chance: refused (paid for the answers) or let through.")
    references_in_main: bool = Field(
        default=False, description="Let reference annotators also take places in main batches.")


class Platform(BaseModel):
    """A crowdsourcing platform: who arrives through the study link and how each one leaves.

    A platform participant leaves with ``completion_code`` after the work assigned to them
    (``batches_per_participant`` main batches); with ``partial_code`` (else ``screen_out_code``)
    when they leave after some tasks (failed qualification, blocked, no place left after the
    qualification), their answers paid as a bonus (``pay_per_task``; the ledger); with
    ``screen_out_code`` when screened out before any task (an eligibility question). Someone who
    did no work and finds none is asked to return the study instead (no code). Reference
    annotators and invited staff get none (see :mod:`convoscope.campaigns._lifecycle`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["none", "prolific", "mturk"] = "none"
    completion_code: str = Field(default="", pattern=CODE, validate_default=True,
                                 description="Code for a participant who finished the assigned work.")
    completion_url: str = Field(
        default="", description="Where a leaving participant is sent; '{code}' is replaced by their code. "
                                "Prolific's default: https://app.prolific.com/submissions/complete?cc={code}")
    screen_out_code: str = Field(
        default="", pattern=CODE, validate_default=True,
        description="Code for a participant screened out before any task, and for one who leaves "
                    "after some tasks when there is no partial_code (Prolific: a code with the "
                    "screen-out action, paid a fixed screen-out reward).")
    partial_code: str = Field(
        default="", pattern=CODE,
        description="Code for a participant who leaves after some tasks without finishing (failed "
                    "qualification, blocked, no place left): Prolific: a code with the 'manually review' "
                    "action; the ledger recommends the bonus for the tasks done. Default: screen_out_code.")
    pay_per_task: float | None = Field(
        default=None, ge=0, description="What one answer is worth, in the study's currency: the bonus "
                                        "the ledger recommends for work done before leaving early.")
    screen_out_reward: float | None = Field(
        default=None, ge=0, description="The fixed screen-out reward set on the platform (shown on "
                                        "the page of people screened out before any task).")
    currency: str = Field(default="GBP", pattern=r"^[A-Z]{3}$", description="The study's currency.")
    participant_ids: Literal["platform", "any"] = Field(
        default="platform", description="platform: take only ids in the platform's own format "
                                        "(Prolific: 24 hexadecimal digits); any: letters, digits, '_' "
                                        "and '-' (at most 64), e.g. for a test link.")
    batches_per_participant: int = Field(
        default=1, ge=1, description="Main batches one platform participant is assigned (one submission).")
    max_participants: int | None = Field(
        default=None, ge=1, description="People the study link adds at most (default: the planned number "
                                        "plus a quarter, at least 2 more).")

    @field_validator("completion_code", "screen_out_code")
    @classmethod
    def _prolific_needs_codes(cls, code: str, info: ValidationInfo) -> str:
        if info.data.get("kind") == "prolific" and not code:
            purpose = "after the assigned work" if info.field_name == "completion_code" else (
                "when someone is screened out after some work (a code with Prolific's screen-out action)")
            raise ValueError(f"a Prolific study needs {info.field_name}: the code participants get {purpose}")
        return code

    def redirect(self, code: str | None = None) -> str | None:
        """Where a participant leaving with ``code`` (default: the completion code) is sent, or None."""
        code = self.completion_code if code is None else code
        url = self.completion_url or (PROLIFIC_COMPLETE if self.kind == "prolific" else "")
        return url.replace("{code}", code) if url and code else None

PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete?cc={code}"


class Attention(BaseModel):
    """Gold / attention items (items whose ``meta.gold`` gives the expected answer per criterion)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    per_batch: int = Field(default=1, ge=0, description="Gold contexts placed in every main batch.")
    max_failures: int = Field(default=0, ge=0, description="Failed checks tolerated; one more triggers "
                                                           "the action.")
    action: Literal["block", "flag"] = Field(
        default="block", description="block: the annotator stops and their answers leave the results; "
                                     "flag: shown in the status only.")


class Questionnaires(BaseModel):
    """Questions asked apart from the judging, as Potato's pre- and post-study surveys: YAML files
    next to campaign.yaml (the format is in docs/campaigns.md). Answers are stored with the
    campaign's answers and exported with ``campaign export --questionnaires``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    before: str | None = Field(default=None, description="Asked after consent, before the instructions "
                                                         "(demographics, eligibility).")
    after: str | None = Field(default=None, description="Asked after the assigned work, before the code "
                                                        "(comments).")


class Reporting(BaseModel):
    """Facts for the reporting checklist (seed 003, step 4) that the campaign's data cannot supply."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    annotation_format: str = Field(
        default="one answer per candidate and criterion from positive / negative / \"I don't know\", "
                "with explanation options after a negative answer and a free-text note",
        description="How people answer (selection, rating, ranking, free text).")
    sampling: str = Field(default="", description="Who was recruited and how (language, country, expertise).")
    demographics: str = Field(default="", description="What is known about the annotators, in aggregate.")
    payment: str = Field(default="", description="Payment per batch or per hour.")
    platform: str = Field(default="convoscope campaign web app, self-hosted",
                          description="Where the work was done (e.g. Prolific + this app).")


class CampaignSpec(BaseModel):
    """A human-evaluation campaign, as written in campaign.yaml."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_\-]*$")
    title: str | None = None
    granularity: Literal["turn", "dialogue"] = "turn"
    criteria: tuple[str, ...] = Field(
        min_length=1, description="Criterion references, e.g. 'response-candidates:appropriateness'.")
    criteria_files: tuple[str, ...] = Field(
        default=(), description="Your own criteria YAML files (relative to the folder), used by name.")
    contexts_per_batch: int = Field(default=10, ge=1, description="Contexts in one batch (seed: about 10).")
    annotators_per_batch: int = Field(default=7, ge=1, description="People who judge each batch (seed: 7).")
    expected_minutes_per_batch: float | None = Field(default=None, gt=0)
    max_minutes_per_batch: float | None = Field(default=None, gt=0)
    include_reference: bool = Field(default=True,
                                    description="Judge the ground-truth turn as one more candidate "
                                                "(in a pairwise campaign: as one more system).")
    pairwise: bool = Field(
        default=False, description="Show two responses to the same context side by side and ask which "
                                   "is better (first / second / tie / I don't know); the order is drawn "
                                   "per annotator and recorded. Answers are pairwise verdicts "
                                   "(criterion 'pairwise:<name>', value the winning system or 'tie').")
    pair_systems: tuple[str, ...] = Field(
        default=(), description="Pairwise: compare only these systems (default: every system).")
    pairs_per_context: int | None = Field(
        default=None, ge=1, description="Pairwise: ask this many pairs per context, rotating through "
                                        "every pair of systems from one context to the next (default: "
                                        "every pair).")
    guidelines_summary: str = Field(default="", description="The short guidelines always on screen.")
    qualification: Qualification = Qualification()
    reporting: Reporting = Reporting()
    language: Literal["en", "ko"] = Field(default="en", description="The annotators' interface language.")
    platform: Platform = Platform()
    attention: Attention = Attention()
    consent: str | None = Field(default=None, description="A Markdown consent text file; annotators "
                                "accept it before the first task.")
    instructions: bool = Field(default=True, description="Show the full guidelines once before the "
                                                         "first task.")
    max_note_chars: int = Field(default=5000, ge=1, le=20000, description="Longest note accepted.")
    questionnaires: Questionnaires = Questionnaires()
    exclude_side_biased: bool = Field(
        default=False, description="Pairwise: leave out of the results the answers of people whose share "
                                   "of choosing the response shown first departs from one half (two-sided "
                                   "binomial test, Holm-adjusted p < 0.05); the report says so.")
    items: str | None = Field(default=None, description="Items file, relative to the campaign folder.")
    store: str = Field(default="campaign.db", description="Store path or database URL.")

    @model_validator(mode="after")
    def _times_in_order(self) -> CampaignSpec:
        expected, maximum = self.expected_minutes_per_batch, self.max_minutes_per_batch
        if expected is not None and maximum is not None and maximum < expected:
            raise ValueError("max_minutes_per_batch must be at least expected_minutes_per_batch")
        return self

    @field_validator("pairwise")
    @classmethod
    def _pairs_of_turns(cls, pairwise: bool, info: ValidationInfo) -> bool:
        if pairwise and info.data.get("granularity") == "dialogue":
            raise ValueError("a pairwise campaign compares two responses to one context; it needs "
                             "granularity: turn")
        return pairwise

    @field_validator("pair_systems", "pairs_per_context", "exclude_side_biased")
    @classmethod
    def _only_when_pairwise(cls, value: Any, info: ValidationInfo) -> Any:
        if value and not info.data.get("pairwise"):
            raise ValueError(f"{info.field_name} applies only with pairwise: true")
        return value

    def task_criterion(self, name: str) -> str:
        """The criterion name answers are stored under: ``pairwise:<name>`` in a pairwise campaign."""
        if self.pairwise and not name.startswith(PAIRWISE_PREFIX):
            return PAIRWISE_PREFIX + name
        return name

    def load_criteria(self, directory: str | Path = ".") -> list[Criterion]:
        """The criteria, in order; bare names are looked up in ``criteria_files`` first."""
        files = [Path(directory) / name for name in self.criteria_files]
        return [get_criterion(ref, extra_paths=files) for ref in self.criteria]


def load_campaign(directory: str | Path) -> CampaignSpec:
    """Read and validate ``<directory>/campaign.yaml``; errors name the line and the field."""
    path = Path(directory) / SPEC_FILE
    if not path.is_file():
        raise CampaignError(path, "no campaign.yaml here (create one with `convoscope campaign init`)")
    text = path.read_text(encoding="utf-8")
    try:
        node, data = yaml.compose(text), yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise CampaignError(path, f"not valid YAML: {getattr(error, 'problem', error)}",
                            line=mark.line + 1 if mark else None) from None
    if not isinstance(data, dict):
        raise CampaignError(path, "expected a mapping of campaign fields")
    try:
        spec = CampaignSpec.model_validate(data)
    except ValidationError as error:
        raise named_error(error, node, path) from None
    _check_criteria(spec, node, path)
    _check_questionnaires(spec, node, path)
    return spec


def _check_questionnaires(spec: CampaignSpec, node: Any, path: Path) -> None:
    for part, name in spec.questionnaires.model_dump().items():
        if name is None:
            continue
        if not (path.parent / name).is_file():
            raise CampaignError(path, f"questionnaire file {name!r} not found next to campaign.yaml",
                                line=yaml_line(node, ("questionnaires", part)),
                                field=f"questionnaires.{part}")
        load_questions(path.parent / name)


def field_line(directory: str | Path, loc: tuple[Any, ...]) -> int | None:
    """The line of a field of ``<directory>/campaign.yaml`` (for errors found after loading)."""
    try:
        return yaml_line(yaml.compose((Path(directory) / SPEC_FILE).read_text(encoding="utf-8")), loc)
    except (OSError, yaml.YAMLError):
        return None


def _check_criteria(spec: CampaignSpec, node: Any, path: Path) -> None:
    wanted = "dialogue" if spec.granularity == "dialogue" else "response"
    files = [path.parent / name for name in spec.criteria_files]
    for index, name in enumerate(spec.criteria_files):
        if not files[index].is_file():
            raise CampaignError(path, f"criteria file {name!r} not found next to campaign.yaml",
                                line=yaml_line(node, ("criteria_files", index)),
                                field=f"criteria_files.{index}")
    for index, ref in enumerate(spec.criteria):
        line, field = yaml_line(node, ("criteria", index)), f"criteria.{index}"
        try:
            criterion = get_criterion(ref, extra_paths=files)
        except ValueError as error:
            raise CampaignError(path, f"criterion {ref!r}: {error}", line=line, field=field) from None
        if criterion.granularity != wanted:
            raise CampaignError(path, f"criterion {ref!r} judges a {criterion.granularity}, but this "
                                f"campaign's granularity is {spec.granularity!r}", line=line, field=field)
