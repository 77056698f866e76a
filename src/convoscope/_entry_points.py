"""What other installed packages add to convoscope, through Python entry points.

Three groups, each read only when a name is looked up (never at import):

* ``convoscope.backends``: the entry's name is a model-spec prefix, its object a factory
  ``factory(rest_of_spec, **options) -> Model`` (as for :func:`convoscope.models.register_backend`);
* ``convoscope.judges``: the entry's name is what ``--judge python:NAME`` asks for, its object a
  judge, a judge factory or a plain function (see :mod:`convoscope.judges._python`);
* ``convoscope.suites``: the entry's name is a suite name, its object a :class:`Suite`, a path to
  a suite's YAML file (a ``str``, ``Path`` or ``importlib.resources`` file), or a function
  returning one of those.

A package declares them in its ``pyproject.toml``::

    [project.entry-points."convoscope.judges"]
    thanks = "acme_judges:says_thanks"
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from convoscope.errors import ConfigError

BACKENDS = "convoscope.backends"
JUDGES = "convoscope.judges"
SUITES = "convoscope.suites"


def entry_point_names(group: str) -> list[str]:
    """The names installed packages register in ``group``, sorted."""
    return sorted({entry.name for entry in metadata.entry_points(group=group)})


def load_entry_point(group: str, name: str) -> Any | None:
    """The object entry point ``name`` of ``group`` names, or None when no package declares it.

    Two packages declaring the same name is an error that names both; an entry point that fails
    to import is an error naming its package and the import's own message."""
    found = {entry.value: entry for entry in metadata.entry_points(group=group, name=name)}
    if not found:
        return None
    if len(found) > 1:
        raise ConfigError(f"{group} entry point {name!r} is declared by several packages: "
                          f"{', '.join(sorted(found))}; uninstall one")
    entry = next(iter(found.values()))
    try:
        return entry.load()
    except Exception as error:  # noqa: BLE001 - any failure of someone else's import is theirs
        package = entry.dist.name if entry.dist is not None else "an installed package"
        raise ConfigError(f"{group} entry point {name!r} ({entry.value}, from {package}) does not "
                          f"load: {type(error).__name__}: {error}") from None
