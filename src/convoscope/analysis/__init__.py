"""Meta-evaluation statistics: agreement, correlation, detection, significance, pooling.

Pure functions on arrays. Data is positional, options are keyword-only. A rater x item matrix
has one row per rater and one column per item, with NaN (or None) where a rater gave no
rating; labels may be numbers or text. Point estimates return a float; ``*_test`` functions and
bootstrap intervals return small frozen result objects.

Undefined results are never a silent NaN: a single statistic raises a ValueError stating the
rule (a constant input has no correlation, one category only has no kappa); the composite
reports (:func:`agreement_table`, :func:`metaeval`, :func:`strong_agreement`) record None with
the reason in their notes, so one degenerate criterion does not hide the rest.

Example::

    from convoscope.analysis import bootstrap_ci, krippendorff_alpha, spearman
    alpha = krippendorff_alpha(ratings, level="ordinal")
    ci = bootstrap_ci(spearman, judge_scores, human_means, seed=0)
"""

from convoscope.analysis._agreement import (
    PairKappa,
    PairwiseKappa,
    StrongAgreement,
    cohen_kappa,
    fleiss_kappa,
    pairwise_cohen_kappa,
    percent_agreement,
    strong_agreement,
)
from convoscope.analysis._bootstrap import BootstrapResult, bootstrap_ci, paired_bootstrap_diff
from convoscope.analysis._classification import (
    BinaryScores,
    Confusion,
    McNemarResult,
    accuracy,
    binary_scores,
    confusion_counts,
    f1,
    mcnemar,
    precision,
    recall,
)
from convoscope.analysis._compare import (
    JudgeComparison,
    SetAverage,
    SystemRow,
    compare_judges,
    dialogue_level,
    per_rater_average,
    system_level,
)
from convoscope.analysis._correlation import (
    CorrelationTest,
    kendall,
    kendall_test,
    pearson,
    pearson_test,
    spearman,
    spearman_test,
    system_correlation,
)
from convoscope.analysis._detection import (
    EqualErrorRate,
    OperatingPoint,
    RocCurve,
    equal_error_rate,
    roc_auc,
    roc_curve,
    threshold_at,
)
from convoscope.analysis._export import latex_escape, paper_table, to_csv, to_latex, to_markdown
from convoscope.analysis._frame import FAST_SUFFIXES, read_frame
from convoscope.analysis._krippendorff import krippendorff_alpha
from convoscope.analysis._labels import label_value, map_labels
from convoscope.analysis._metaeval import HumanCeiling, MetaevalRow, metaeval
from convoscope.analysis._pooling import majority_vote, mean_pool, median_pool
from convoscope.analysis._raters import leave_one_out, pairwise_correlation
from convoscope.analysis._read import RatingColumns, parse_value, read_ratings
from convoscope.analysis._report import metaeval_report
from convoscope.analysis._significance import (
    DependentCorrelationTest,
    PermutationResult,
    permutation_test,
    steiger_test,
    steiger_z,
    williams_t,
    williams_test,
)
from convoscope.analysis._study import MetaevalStudy, metaeval_study
from convoscope.analysis._summary import IDK_ANSWERS, AgreementRow, agreement_table, by_slot
from convoscope.analysis._system import run_agreement, system_bootstrap_ci, system_means
from convoscope.analysis._tables import IDK, RaterMatrix, Rating, rater_matrices

__all__ = [
    "FAST_SUFFIXES",
    "IDK",
    "IDK_ANSWERS",
    "AgreementRow",
    "BinaryScores",
    "BootstrapResult",
    "Confusion",
    "CorrelationTest",
    "DependentCorrelationTest",
    "EqualErrorRate",
    "HumanCeiling",
    "JudgeComparison",
    "McNemarResult",
    "MetaevalStudy",
    "MetaevalRow",
    "OperatingPoint",
    "PairKappa",
    "PairwiseKappa",
    "PermutationResult",
    "RaterMatrix",
    "Rating",
    "RatingColumns",
    "RocCurve",
    "SetAverage",
    "StrongAgreement",
    "SystemRow",
    "accuracy",
    "agreement_table",
    "binary_scores",
    "bootstrap_ci",
    "by_slot",
    "cohen_kappa",
    "compare_judges",
    "confusion_counts",
    "dialogue_level",
    "equal_error_rate",
    "f1",
    "fleiss_kappa",
    "kendall",
    "kendall_test",
    "krippendorff_alpha",
    "label_value",
    "latex_escape",
    "leave_one_out",
    "majority_vote",
    "map_labels",
    "mcnemar",
    "mean_pool",
    "median_pool",
    "metaeval",
    "metaeval_report",
    "metaeval_study",
    "paired_bootstrap_diff",
    "pairwise_cohen_kappa",
    "pairwise_correlation",
    "paper_table",
    "parse_value",
    "pearson",
    "pearson_test",
    "per_rater_average",
    "percent_agreement",
    "permutation_test",
    "precision",
    "rater_matrices",
    "read_frame",
    "read_ratings",
    "recall",
    "roc_auc",
    "roc_curve",
    "run_agreement",
    "spearman",
    "spearman_test",
    "steiger_test",
    "steiger_z",
    "strong_agreement",
    "system_bootstrap_ci",
    "system_correlation",
    "system_level",
    "system_means",
    "threshold_at",
    "to_csv",
    "to_latex",
    "to_markdown",
    "williams_t",
    "williams_test",
]
