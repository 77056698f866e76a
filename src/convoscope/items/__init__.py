"""Items to judge, and reading / writing them."""

from convoscope.items._model import Item, Turn

__all__ = ["Item", "Turn"]
