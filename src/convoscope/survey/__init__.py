"""Survey answers (seed 000): gibberish filter, grader-directed answers, effort / relevance /
completeness judging, overall quality by Sum, fitted ridge weights or LLM synthesis, accept /
hold / reject by the seed's EER rule (``survey fit``), and a follow-up question for weak answers.

    result = asyncio.run(score_survey_async(items, [JudgeSpec("embedded")], store=Store(path),
                                            cache_path=None))
    write_scored_csv(result.answers, "scored.csv")
"""

from convoscope.survey._fit import (
    DEFAULT_ALPHAS,
    DIMENSION_MAXIMA,
    DIMENSIONS,
    FitAggregate,
    FittedModel,
    RocPoint,
    aggregate_scores,
    choose_alpha,
    choose_threshold,
    cross_validated_scores,
    fit_model,
    hold_band,
    load_model,
    ridge_fit,
    save_model,
)
from convoscope.survey._fitfile import fit_labelled, roc_rows
from convoscope.survey._followup import follow_up_for
from convoscope.survey._output import (
    COLUMNS,
    ExpertLabels,
    ScoredFeatures,
    read_labels,
    read_scored_features,
    write_scored_csv,
)
from convoscope.survey._read import SurveyColumns, SurveyExport, read_survey
from convoscope.survey._report import render_report as render_survey_report
from convoscope.survey._report import write_report as write_survey_report
from convoscope.survey._score import (
    Aggregation,
    Decision,
    ScoredAnswer,
    SurveyResult,
    decide,
    score_survey_async,
)

__all__ = [
    "COLUMNS",
    "DEFAULT_ALPHAS",
    "DIMENSIONS",
    "DIMENSION_MAXIMA",
    "Aggregation",
    "Decision",
    "ExpertLabels",
    "FitAggregate",
    "FittedModel",
    "RocPoint",
    "ScoredAnswer",
    "ScoredFeatures",
    "SurveyColumns",
    "SurveyExport",
    "SurveyResult",
    "aggregate_scores",
    "choose_alpha",
    "choose_threshold",
    "cross_validated_scores",
    "decide",
    "fit_labelled",
    "fit_model",
    "follow_up_for",
    "hold_band",
    "load_model",
    "read_labels",
    "read_scored_features",
    "read_survey",
    "render_survey_report",
    "ridge_fit",
    "roc_rows",
    "save_model",
    "score_survey_async",
    "write_survey_report",
    "write_scored_csv",
]
