"""Human-evaluation campaigns: spec, batching and assignment, qualification, monitoring, results.

People answer the same criteria as the LLM judges; every answer is stored as a human Verdict.
"""

from convoscope.campaigns._access import Standing, excluded_reason
from convoscope.campaigns._add import AddedItems, add_items
from convoscope.campaigns._answers import (
    IDK,
    IDK_DEFINITION,
    IDK_LABEL,
    N_,
    TIE,
    AnswerError,
    Submission,
    answer_choices,
    choices,
    options_for,
    pair_choices,
    pair_order,
    shown_slot,
    task_key,
    to_verdict,
)
from convoscope.campaigns._campaign import BatchFull, Campaign, Work
from convoscope.campaigns._events import Event, EventLog
from convoscope.campaigns._export import (
    decision_rows,
    export_decisions,
    export_questionnaires,
    export_verdicts,
    spreadsheet_safe,
)
from convoscope.campaigns._import import ImportSummary, VerdictImportError, import_verdicts
from convoscope.campaigns._ledger import (
    LedgerRow,
    ledger_rows,
    prolific_approve_ids,
    prolific_bonus_lines,
    write_ledger,
)
from convoscope.campaigns._lifecycle import Admission, Exit, exit_for, participant_limit
from convoscope.campaigns._monitor import (
    BatchAgreement,
    QualificationResult,
    answer_matrix,
    batch_agreement,
    flag_annotators,
    qualify,
)
from convoscope.campaigns._open import open_campaign, remember_locations, secure_sqlite, store_location
from convoscope.campaigns._pair_results import PairResults, SideShare, pair_results, side_biased, side_shares
from convoscope.campaigns._people import (
    MTURK_PREVIEW,
    PLATFORM_PARAMETERS,
    Annotator,
    PlatformError,
    invite,
    platform_session,
    read_annotators,
)
from convoscope.campaigns._plan import (
    Batch,
    Candidate,
    Context,
    Task,
    choose_batch,
    context_key,
    group_contexts,
    make_batches,
    pair_contexts,
)
from convoscope.campaigns._qualify import chance_of_hits, majority_accuracy, references_agreement
from convoscope.campaigns._questionnaire import Question, check_answers, load_questions
from convoscope.campaigns._report import render_report as render_campaign_report
from convoscope.campaigns._report import status_tables
from convoscope.campaigns._report import write_report as write_campaign_report
from convoscope.campaigns._results import OptionCount, SystemResult, option_breakdown, system_results
from convoscope.campaigns._spec import (
    Attention,
    CampaignError,
    CampaignSpec,
    Platform,
    Qualification,
    Questionnaires,
    Reporting,
    load_campaign,
)
from convoscope.campaigns._status import AnnotatorStatus, BatchStatus, CampaignStatus, Note, campaign_status
from convoscope.campaigns._template import init_campaign

__all__ = [
    "LedgerRow",
    "ledger_rows",
    "majority_accuracy",
    "prolific_approve_ids",
    "prolific_bonus_lines",
    "references_agreement",
    "write_ledger",
    "Admission",
    "Exit",
    "Question",
    "Questionnaires",
    "chance_of_hits",
    "check_answers",
    "exit_for",
    "decision_rows",
    "export_decisions",
    "export_questionnaires",
    "load_questions",
    "participant_limit",
    "remember_locations",
    "side_biased",
    "store_location",
    "PairResults",
    "SideShare",
    "choices",
    "pair_choices",
    "pair_contexts",
    "pair_order",
    "pair_results",
    "shown_slot",
    "side_shares",
    "AddedItems",
    "add_items",
    "IDK",
    "IDK_DEFINITION",
    "IDK_LABEL",
    "TIE",
    "MTURK_PREVIEW",
    "N_",
    "PLATFORM_PARAMETERS",
    "Attention",
    "Event",
    "EventLog",
    "Note",
    "Platform",
    "PlatformError",
    "Standing",
    "excluded_reason",
    "platform_session",
    "secure_sqlite",
    "spreadsheet_safe",
    "Annotator",
    "AnnotatorStatus",
    "AnswerError",
    "Batch",
    "BatchAgreement",
    "BatchFull",
    "BatchStatus",
    "Campaign",
    "CampaignError",
    "CampaignSpec",
    "CampaignStatus",
    "Candidate",
    "Context",
    "ImportSummary",
    "OptionCount",
    "Qualification",
    "QualificationResult",
    "Reporting",
    "Submission",
    "SystemResult",
    "Task",
    "VerdictImportError",
    "Work",
    "answer_choices",
    "answer_matrix",
    "batch_agreement",
    "campaign_status",
    "choose_batch",
    "context_key",
    "export_verdicts",
    "flag_annotators",
    "group_contexts",
    "import_verdicts",
    "init_campaign",
    "invite",
    "load_campaign",
    "make_batches",
    "open_campaign",
    "option_breakdown",
    "options_for",
    "qualify",
    "read_annotators",
    "render_campaign_report",
    "status_tables",
    "system_results",
    "task_key",
    "to_verdict",
    "write_campaign_report",
]
