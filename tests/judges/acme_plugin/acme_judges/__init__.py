"""A third party's convoscope judges: a rule (function) and a class with settings."""

from __future__ import annotations

from importlib import resources

import convoscope as cs


@cs.python_judge(name="acme-thanks", version="1")
def says_thanks(item: cs.Item, criterion: cs.Criterion) -> object:
    """1 when the response thanks the user, 0 when it does not."""
    if item.response is None:
        return cs.Unscored("there is no response to read")
    if "crash" in item.response:
        raise RuntimeError(f"cannot read {item.id}")
    thanked = any(word in item.response.lower() for word in ("thank", "grateful"))
    return int(thanked), "a word of thanks" if thanked else "no word of thanks"


@cs.python_judge(name="acme-length", version="2")
class LengthJudge:
    """Longer answers score higher, on a range scale: one point per ``words_per_point`` words."""

    def __init__(self, words_per_point: int = 5) -> None:
        self.words_per_point = words_per_point

    async def __call__(self, item: cs.Item, criterion: cs.Criterion) -> object:
        scale = criterion.scale
        if scale.minimum is None or scale.maximum is None:
            return cs.Unscored("needs a range scale")
        words = len((item.response or "").split())
        return min(scale.maximum, scale.minimum + words // self.words_per_point)


def suite_file() -> object:
    """The acme suite's YAML file, inside this package."""
    return resources.files("acme_judges") / "acme.yaml"
