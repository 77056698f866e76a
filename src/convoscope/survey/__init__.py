"""Survey answers (seed 000): gibberish filter, grader-directed answers, effort / relevance /
completeness judging, overall quality by Sum, fitted ridge weights or LLM synthesis, accept /
hold / reject by the seed's EER rule (``survey fit``), and a follow-up question for weak answers.

    result = asyncio.run(score_survey_async(items, [JudgeSpec("embedded")], store=Store(path),
                                            cache_path=None))
    write_scored_csv(result.answers, "scored.csv")
"""

from convoscope.survey._evaluate import (
    DecisionAgreement,
    DimensionAgreement,
    SurveyEvaluation,
    evaluate_labelled,
)
from convoscope.survey._features import (
    FEATURE_SETS,
    FEATURES,
    TEXT_FEATURES,
    answer_features,
    compare_feature_sets,
    parse_features,
    text_features,
)
from convoscope.survey._fit import (
    DEFAULT_ALPHAS,
    DIMENSION_MAXIMA,
    DIMENSIONS,
    FeatureSetScore,
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
from convoscope.survey._fitfile import check_label_ids, fit_labelled, roc_rows
from convoscope.survey._followup import follow_up_for
from convoscope.survey._output import (
    COLUMNS,
    ExpertLabels,
    ScoredFeatures,
    read_labels,
    read_scored_features,
    read_scored_rows,
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
from convoscope.survey._shipped import (
    decision_model,
    describe_shipped,
    shipped_model,
    shipped_model_applies,
)

__all__ = [
    "COLUMNS",
    "DEFAULT_ALPHAS",
    "DIMENSIONS",
    "DIMENSION_MAXIMA",
    "FEATURES",
    "FEATURE_SETS",
    "TEXT_FEATURES",
    "Aggregation",
    "Decision",
    "DecisionAgreement",
    "DimensionAgreement",
    "ExpertLabels",
    "FeatureSetScore",
    "FitAggregate",
    "FittedModel",
    "RocPoint",
    "ScoredAnswer",
    "ScoredFeatures",
    "SurveyColumns",
    "SurveyExport",
    "SurveyEvaluation",
    "SurveyResult",
    "aggregate_scores",
    "answer_features",
    "check_label_ids",
    "choose_alpha",
    "choose_threshold",
    "compare_feature_sets",
    "cross_validated_scores",
    "decide",
    "decision_model",
    "describe_shipped",
    "evaluate_labelled",
    "fit_labelled",
    "fit_model",
    "follow_up_for",
    "hold_band",
    "load_model",
    "parse_features",
    "read_labels",
    "read_scored_rows",
    "read_scored_features",
    "read_survey",
    "render_survey_report",
    "ridge_fit",
    "roc_rows",
    "save_model",
    "score_survey_async",
    "shipped_model",
    "shipped_model_applies",
    "text_features",
    "write_survey_report",
    "write_scored_csv",
]
