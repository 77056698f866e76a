"""Survey answers (seed 000): gibberish filter, effort / relevance / completeness judging,
overall quality by sum, fitted ridge weights or LLM synthesis, accept / hold / reject, and a
follow-up question for weak answers.

    result = asyncio.run(score_survey_async(items, [JudgeSpec("embedded")], store=Store(path),
                                            cache_path=None))
    write_scored_csv(result.answers, "scored.csv")
"""

from convoscope.survey._fit import (
    DEFAULT_ALPHAS,
    DIMENSION_MAXIMA,
    DIMENSIONS,
    FittedModel,
    choose_alpha,
    choose_threshold,
    fit_model,
    load_model,
    ridge_fit,
    save_model,
)
from convoscope.survey._followup import follow_up_for
from convoscope.survey._output import (
    COLUMNS,
    read_labels,
    read_scored_features,
    write_scored_csv,
)
from convoscope.survey._report import render_report, write_report
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
    "FittedModel",
    "ScoredAnswer",
    "SurveyResult",
    "choose_alpha",
    "choose_threshold",
    "decide",
    "fit_model",
    "follow_up_for",
    "load_model",
    "read_labels",
    "read_scored_features",
    "render_report",
    "ridge_fit",
    "save_model",
    "score_survey_async",
    "write_report",
    "write_scored_csv",
]
