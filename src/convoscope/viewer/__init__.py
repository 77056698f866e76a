"""``convoscope view``: a local page to look at verdicts — runs, filters, every judge's and
person's verdict and reason side by side, each item with its context."""

from convoscope.viewer._app import create_app, serve
from convoscope.viewer._data import FILTERS, Row, ViewerData, load

__all__ = ["FILTERS", "Row", "ViewerData", "create_app", "load", "serve"]
