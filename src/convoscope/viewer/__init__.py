"""``convoscope view``: a local page to look at verdicts — runs, filters, every judge's and
person's verdict and reason side by side, each item with its context; the runs of a store, of
run archives and of ``judge --out`` files, two of them side by side (``/compare``); judge cards."""

from convoscope.viewer._app import create_app, serve
from convoscope.viewer._cards import read_card
from convoscope.viewer._data import FILTERS, Row, ViewerData, load
from convoscope.viewer._prompts import PromptDifference, prompt_difference
from convoscope.viewer._runs import RunInfo
from convoscope.viewer._side import Pair, SideBySide, side_by_side

__all__ = [
    "FILTERS",
    "Pair",
    "PromptDifference",
    "Row",
    "RunInfo",
    "SideBySide",
    "ViewerData",
    "create_app",
    "load",
    "prompt_difference",
    "read_card",
    "serve",
    "side_by_side",
]
