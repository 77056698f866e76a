"""Choosing the criteria of a run: whole suites, single criteria and user files, checked once.

The CLI's ``--suite``, ``--criterion``, ``--criteria-file`` and ``--kpi`` map onto
:func:`select_criteria`; a notebook calls it (or :func:`suite_criteria`) directly.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from convoscope.criteria._load import get_criterion, load_criteria, load_suite
from convoscope.criteria._model import Criterion
from convoscope.errors import ConfigError


def suite_criteria(name_or_path: str | Path) -> list[Criterion]:
    """Every criterion of a built-in suite (``"survey"``) or of a suite file.

    >>> [criterion.name for criterion in suite_criteria("survey")][:3]
    ['effort', 'relevance', 'completeness']
    """
    return list(load_suite(name_or_path).criteria)


def select_criteria(*, suites: Iterable[str | Path] = (), names: Iterable[str] = (),
                    files: Iterable[str | Path] = (), only: Iterable[str] = ()) -> list[Criterion]:
    """The criteria of ``suites``, then those in ``files``, then each of ``names`` (``suite:name``,
    or a bare name looked up in ``files`` first, then in the built-in suites).

    ``only`` keeps just the criteria with those names (e.g. a few KPIs of the ``kpi`` suite); when
    it is given without any suite or file, the ``kpi`` suite is where they are looked for.
    A criterion named twice, an empty choice and an ``only`` name that is not among the chosen
    criteria are :class:`~convoscope.errors.ConfigError`.
    """
    suites, names, files, only = list(suites), list(names), list(files), list(only)
    if only and not suites and not files:
        suites = ["kpi"]
    chosen = [criterion for suite in suites for criterion in suite_criteria(suite)]
    chosen += [criterion for path in files for criterion in load_criteria(path)]
    chosen += [get_criterion(name, extra_paths=files) for name in names]
    if not chosen:
        raise ConfigError("name at least one suite, criterion or criteria file")
    given = [criterion.name for criterion in chosen]
    duplicated = sorted({name for name in given if given.count(name) > 1})
    if duplicated:
        raise ConfigError(f"criteria named twice: {', '.join(duplicated)}")
    if not only:
        return chosen
    unknown = sorted(set(only) - set(given))
    if unknown:
        raise ConfigError(f"{', '.join(unknown)}: not among the criteria of the given suites and files")
    return [criterion for criterion in chosen if criterion.name in only]
