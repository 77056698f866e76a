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
            for old, new in old_to_new.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{function.__name__}: give {new}= only ({old}= is its old name)")
                    warnings.warn(f"{function.__name__}: the argument {old}= is now {new}= (the old name "
                                  "goes in the next release)", DeprecationWarning, stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
