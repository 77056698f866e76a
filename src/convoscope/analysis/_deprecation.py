"""Old keyword names of the statistics kept for one release, with a DeprecationWarning.

The statistics follow scikit-learn's argument names (``y_true``, ``y_pred``, ``y_score``); a
caller still passing an old name by keyword gets the same result and a warning naming the new one.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def renamed(**old_to_new: str) -> Callable[[F], F]:
    """Accept ``old=value`` as ``new=value`` with a DeprecationWarning (one release)."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            used = [old for old in old_to_new if old in kwargs]
            for old in used:
                new = old_to_new[old]
                if new in kwargs:
                    raise TypeError(f"{function.__name__}: give {new}= only ({old}= is its old name)")
                kwargs[new] = kwargs.pop(old)
            if used:
                names = ", ".join(f"{old}= is now {old_to_new[old]}=" for old in used)
                warnings.warn(f"{function.__name__}: {names} (the old names go in the next release)",
                              DeprecationWarning, stacklevel=2)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
