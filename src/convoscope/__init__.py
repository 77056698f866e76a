"""convoscope: measure the quality of conversational responses.

The flow is carried by four nouns: an :class:`Item` is judged on a :class:`Criterion` by a judge
(or a person), producing a :class:`Verdict`. Everything else consumes or produces them.
"""

from convoscope.criteria import Criterion, Scale
from convoscope.items import Item, Turn
from convoscope.judges import Verdict

__all__ = ["Criterion", "Item", "Scale", "Turn", "Verdict"]
__version__ = "0.1.0"
