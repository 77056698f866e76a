"""A meta-evaluation study as flat records, one list per part, for ``MetaevalStudy.to_pandas``."""

from __future__ import annotations

from typing import Any


def _interval(prefix: str, result: Any) -> dict[str, Any]:
    return {prefix: None if result is None else result.estimate,
            f"{prefix}_low": None if result is None else result.low,
            f"{prefix}_high": None if result is None else result.high}


def _p(test: Any) -> float | None:
    return None if test is None else test.pvalue


def flat_records(study: Any, part: str) -> list[dict[str, Any]]:
    parts = {"rows": _rows, "comparisons": _comparisons, "systems": _systems,
             "system_comparisons": _system_comparisons, "rankings": _rankings, "per_set": _per_set,
             "self_consistency": _self_consistency}
    return parts[part](study)


def _self_consistency(study: Any) -> list[dict[str, Any]]:
    return [found.as_dict() for found in study.self_consistency]


def _rows(study: Any) -> list[dict[str, Any]]:
    records = study.records()
    for record, row in zip(records, study.rows, strict=True):
        humans = row.humans
        record.update(humans=humans.n_humans, humans_alpha_level=humans.alpha_level,
                      **_interval("humans_alpha", humans.alpha_ci), humans_loo_spearman=humans.loo_spearman,
                      alpha=study.alpha, correction=study.correction)
        record["humans_alpha"] = humans.alpha
        check = row.ceiling_check  # the judge against the others' mean, as each person is
        record.update(judge_loo_spearman=check.judge_loo if check else None,
                      **_interval("ceiling_difference", check.difference if check else None))
    return records


def _comparisons(study: Any) -> list[dict[str, Any]]:
    return [{"criterion": c.criterion, "judge_a": c.judge_a, "judge_b": c.judge_b, "n": c.n_items,
             "r_a": c.williams.r_a if c.williams else None, "r_b": c.williams.r_b if c.williams else None,
             "williams_p": _p(c.williams), "steiger_p": _p(c.steiger), **_interval("difference", c.bootstrap),
             "permutation_p": _p(c.permutation), "mcnemar_p": _p(c.mcnemar)} for c in study.comparisons]


def _systems(study: Any) -> list[dict[str, Any]]:
    return [{"criterion": s.criterion, "judge": s.judge, "n_systems": s.n_systems, "resample": s.resample,
             **_interval("pearson", s.pearson), **_interval("spearman", s.spearman),
             "pairwise_accuracy": s.pairwise_accuracy.accuracy if s.pairwise_accuracy else None,
             "outliers": ", ".join(s.outliers), "pearson_without_outliers": s.pearson_without_outliers,
             "most_influential": s.weakest[0] if s.weakest else None,
             "pearson_without_most_influential": s.weakest[1] if s.weakest else None,
             "notes": "; ".join(s.notes)} for s in study.systems]


def _system_comparisons(study: Any) -> list[dict[str, Any]]:
    return [{"criterion": c.criterion, "judge_a": c.judge_a, "judge_b": c.judge_b, "n_systems": c.n_systems,
             "r_a": c.williams.r_a if c.williams else None, "r_b": c.williams.r_b if c.williams else None,
             "williams_p": _p(c.williams), **_interval("difference", c.bootstrap),
             "permutation_p": _p(c.permutation)} for c in study.system_comparisons]


def _rankings(study: Any) -> list[dict[str, Any]]:
    out = []
    for ranking in study.rankings:
        clusters = {name: index + 1 for index, cluster in enumerate(
            ranking.significance.clusters if ranking.significance else ()) for name in cluster}
        for rank in ranking.ranks:
            out.append({"criterion": ranking.criterion, "system": rank.system, "mean": rank.mean,
                        "rank": rank.rank, "rank_low": rank.low, "rank_high": rank.high,
                        "cluster": clusters.get(rank.system)})
    return out


def _per_set(study: Any) -> list[dict[str, Any]]:
    return [{key: value for key, value in p.as_dict().items() if key != "per_set"} for p in study.per_set]
