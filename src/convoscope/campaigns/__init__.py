"""Human-evaluation campaigns: spec, batching and assignment, qualification, monitoring, results.

People answer the same criteria as the LLM judges; every answer is stored as a human Verdict.
"""

from convoscope.campaigns._answers import (
    IDK,
    AnswerError,
    Submission,
    answer_choices,
    options_for,
    task_key,
    to_verdict,
)
from convoscope.campaigns._campaign import (
    Annotator,
    BatchFull,
    Campaign,
    Work,
    invite,
    open_campaign,
    read_annotators,
)
from convoscope.campaigns._export import export_verdicts
from convoscope.campaigns._import import ImportSummary, VerdictImportError, import_verdicts
from convoscope.campaigns._monitor import (
    BatchAgreement,
    QualificationResult,
    answer_matrix,
    batch_agreement,
    flag_annotators,
    qualify,
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
)
from convoscope.campaigns._report import render_report, status_tables, write_report
from convoscope.campaigns._results import OptionCount, SystemResult, option_breakdown, system_results
from convoscope.campaigns._spec import CampaignError, CampaignSpec, Qualification, Reporting, load_campaign
from convoscope.campaigns._status import AnnotatorStatus, BatchStatus, CampaignStatus, campaign_status
from convoscope.campaigns._template import init_campaign

__all__ = [
    "IDK",
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
    "render_report",
    "status_tables",
    "system_results",
    "task_key",
    "to_verdict",
    "write_report",
]
