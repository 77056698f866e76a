"""Two runs side by side: what changed per item and criterion, and whether it is more than noise.

Example::

    import convoscope as cs
    comparison = cs.compare("verdicts-a.jsonl", "verdicts-b.jsonl")
    comparison.to_pandas()          # one row per criterion: change, interval, paired test, agreement
    comparison.flips_frame()        # the items that changed, largest first
"""

from convoscope.comparison._compare import Comparison, CriterionChange, Flip, GroupChange, HumanCheck, compare
from convoscope.comparison._gate import Condition
from convoscope.comparison._load import RunSide, load_side
from convoscope.comparison._render import to_html, to_markdown
from convoscope.comparison._stats import PairedTest, infer_level, mean_change_interval, stuart_maxwell

__all__ = [
    "Comparison",
    "Condition",
    "CriterionChange",
    "Flip",
    "GroupChange",
    "HumanCheck",
    "PairedTest",
    "RunSide",
    "compare",
    "infer_level",
    "load_side",
    "mean_change_interval",
    "stuart_maxwell",
    "to_html",
    "to_markdown",
]
