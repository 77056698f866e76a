"""Human labels as the values judges store: "present" / "absent", "yes" / "no", "fulfilled" /
"not fulfilled" become 1 / 0 the way the criterion's scale says.

Judges store a binary criterion as 1 (the scale's first, positive label) or 0; annotation files
often keep the words. Without this mapping the two sides share no value and nothing can be
compared. :func:`label_value` is the one rule, used wherever human labels are read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from convoscope.analysis._summary import IDK_ANSWERS, _replace
from convoscope.analysis._validate import is_missing
from convoscope.errors import LocatedError

_DEFAULT_BINARY = {
    "yes": 1, "no": 0, "true": 1, "false": 0, "present": 1, "absent": 0, "fulfilled": 1,
    "not fulfilled": 0, "unfulfilled": 0, "positive": 1, "negative": 0, "pass": 1, "fail": 0,
}


def label_value(criterion: Any, text: Any) -> int | float | str | None:
    """The stored value of a human label for ``criterion`` (a :class:`convoscope.criteria.Criterion`,
    or None for the common binary words only). Numbers pass through; missing stays None.

    With a criterion, the label must be on its scale (its labels, or the usual words for a
    binary scale), else a ValueError names the admissible values. Without one, the binary words
    yes/no, present/absent, fulfilled/not fulfilled, true/false, pass/fail map to 1/0 and any
    other text is returned unchanged.

    >>> label_value(None, "Present"), label_value(None, "not fulfilled"), label_value(None, 3)
    (1, 0, 3)
    >>> from convoscope.criteria import Criterion
    >>> issue = Criterion(name="irrelevant", question="Is the turn irrelevant?", definition="Off topic.",
    ...                   scale={"kind": "binary", "labels": ["present", "absent"]})
    >>> label_value(issue, "absent")
    0
    """
    if is_missing(text):
        return None
    if isinstance(text, bool):
        return int(text)
    if isinstance(text, int | float):
        return text
    if criterion is None:
        return _DEFAULT_BINARY.get(str(text).strip().lower(), text)
    value = criterion.scale.coerce(text)
    if value is None:
        allowed = criterion.scale.values()
        shown = allowed if criterion.scale.kind != "binary" else [*criterion.scale.binary_labels, 1, 0]
        raise ValueError(f"label {text!r} is not on the scale of {criterion.name!r} (allowed: {shown})")
    return value


def map_labels(ratings: Iterable[Any], criteria: Mapping[str, Any] | None = None) -> list[Any]:
    """The ratings with text values replaced by :func:`label_value` of their criterion (looked up
    by name in ``criteria``; criteria not there get the default binary words). A label off the
    scale raises :class:`convoscope.errors.LocatedError` naming the file and line it came from.
    "I don't know" answers (:data:`IDK_ANSWERS`) are left as they are.
    """
    criteria = criteria or {}
    mapped = []
    for rating in ratings:
        value = rating.value
        if isinstance(value, str) and value.strip().lower() not in IDK_ANSWERS:
            try:
                new = label_value(criteria.get(str(rating.criterion)), value)
            except ValueError as error:
                path, _, line = (getattr(rating, "source", None) or "").rpartition(":")
                raise LocatedError(path or None, str(error), line=int(line) if line.isdigit() else None,
                                   field="value") from None
            if new != value:
                rating = _replace(rating, value=new)
        mapped.append(rating)
    return mapped
