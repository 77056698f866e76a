"""Which installed distribution a judge's code comes from, for its identity (resume keys).

A plug-in package's judge is the code of that package's release: installing 0.2.0 over 0.1.0
must judge again. ``importlib.metadata.packages_distributions`` maps top-level modules to the
distributions that provide them; its answer is kept per ``sys.path``, since it reads every
installed distribution's metadata.
"""

from __future__ import annotations

import functools
import importlib.metadata
import sys
from typing import Any

# convoscope's own judges are versioned by their declared version, not by every release.
_OWN = "convoscope"


def distributions_of(code: Any) -> list[str]:
    """``name==version`` for each distribution that provides the module ``code`` is defined in
    (a function, a class, a callable object or a partial); empty when none does."""
    while isinstance(code, functools.partial):
        code = code.func
    module = getattr(code, "__module__", None) or type(code).__module__  # an object: its class's
    top = (module or "").partition(".")[0]
    if not top or top in (_OWN, "__main__", "builtins"):
        return []
    names = _packages(tuple(sys.path)).get(top, [])
    found = []
    for name in sorted(set(names)):
        try:
            found.append(f"{name}=={importlib.metadata.distribution(name).version}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


@functools.lru_cache(maxsize=4)
def _packages(path: tuple[str, ...]) -> dict[str, list[str]]:
    del path  # the cache key: another sys.path may hold other distributions
    return dict(importlib.metadata.packages_distributions())
