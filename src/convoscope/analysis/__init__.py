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
from convoscope.analysis._agreement_ci import (
    cohen_kappa_ci,
    fleiss_kappa_ci,
    krippendorff_alpha_ci,
    pairwise_cohen_kappa_ci,
)
from convoscope.analysis._alttest import AltTestAnnotator, AltTestResult, alt_test
from convoscope.analysis._bootstrap import BootstrapResult, bootstrap_ci, paired_bootstrap_diff
from convoscope.analysis._ceiling import CeilingComparison, compare_with_ceiling
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
    compare_judges,
    dialogue_level,
    per_rater_average,
)
from convoscope.analysis._consistency import pairwise_agreement
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
from convoscope.analysis._decision import Decision, Outcome
from convoscope.analysis._detection import (
    EqualErrorRate,
    OperatingPoint,
    RocCurve,
    equal_error_rate,
    roc_auc,
    roc_curve,
    threshold_at,
)
from convoscope.analysis._export import paper_table, to_csv, to_markdown
from convoscope.analysis._export_latex import latex_escape, to_latex
from convoscope.analysis._frame import FAST_SUFFIXES, read_frame
from convoscope.analysis._krippendorff import krippendorff_alpha
from convoscope.analysis._labels import label_value, map_labels
from convoscope.analysis._metaeval import HumanCeiling, MetaevalRow, default_level, metaeval
from convoscope.analysis._multitest import CORRECTIONS, adjust_pvalues
from convoscope.analysis._pooling import TIES, majority_vote, mean_pool, median_pool
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
from convoscope.analysis._study_system import (
    SystemComparison,
    SystemRanking,
    SystemRow,
    system_comparisons,
    system_level,
    system_rankings,
)
from convoscope.analysis._summary import IDK_ANSWERS, AgreementRow, agreement_table, by_slot
from convoscope.analysis._system import run_agreement, system_bootstrap_ci, system_means
from convoscope.analysis._system_level import (
    MIN_SYSTEMS,
    PairwiseAccuracy,
    RankInterval,
    outlier_systems,
    pairwise_accuracy,
    rank_intervals,
    system_level_ci,
    system_paired_bootstrap,
    system_permutation_test,
    system_williams_test,
)
from convoscope.analysis._system_significance import SystemSignificance, system_significance
from convoscope.analysis._tables import IDK, RaterMatrix, Rating, rater_matrices

__all__ = [
    "CORRECTIONS",
    "FAST_SUFFIXES",
    "IDK",
    "IDK_ANSWERS",
    "MIN_SYSTEMS",
    "TIES",
    "AgreementRow",
    "AltTestAnnotator",
    "AltTestResult",
    "BinaryScores",
    "BootstrapResult",
    "CeilingComparison",
    "Confusion",
    "CorrelationTest",
    "DependentCorrelationTest",
    "EqualErrorRate",
    "HumanCeiling",
    "JudgeComparison",
    "McNemarResult",
    "MetaevalRow",
    "MetaevalStudy",
    "OperatingPoint",
    "PairKappa",
    "PairwiseAccuracy",
    "PairwiseKappa",
    "PermutationResult",
    "RankInterval",
    "RaterMatrix",
    "Rating",
    "RatingColumns",
    "RocCurve",
    "SetAverage",
    "StrongAgreement",
    "SystemComparison",
    "SystemRanking",
    "SystemRow",
    "SystemSignificance",
    "accuracy",
    "adjust_pvalues",
    "agreement_table",
    "alt_test",
    "Decision",
    "pairwise_agreement",
    "Outcome",
    "binary_scores",
    "bootstrap_ci",
    "by_slot",
    "cohen_kappa",
    "cohen_kappa_ci",
    "compare_judges",
    "compare_with_ceiling",
    "confusion_counts",
    "default_level",
    "dialogue_level",
    "equal_error_rate",
    "f1",
    "fleiss_kappa",
    "fleiss_kappa_ci",
    "kendall",
    "kendall_test",
    "krippendorff_alpha",
    "krippendorff_alpha_ci",
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
    "outlier_systems",
    "paired_bootstrap_diff",
    "pairwise_accuracy",
    "pairwise_cohen_kappa",
    "pairwise_cohen_kappa_ci",
    "pairwise_correlation",
    "paper_table",
    "parse_value",
    "pearson",
    "pearson_test",
    "per_rater_average",
    "percent_agreement",
    "permutation_test",
    "precision",
    "rank_intervals",
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
    "system_comparisons",
    "system_correlation",
    "system_level",
    "system_level_ci",
    "system_means",
    "system_paired_bootstrap",
    "system_permutation_test",
    "system_rankings",
    "system_significance",
    "system_williams_test",
    "threshold_at",
    "to_csv",
    "to_latex",
    "to_markdown",
    "williams_t",
    "williams_test",
]
