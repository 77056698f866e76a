"""The question :func:`convoscope.runs._ray_nodes.check_nodes` sends to each Ray node.

It is pickled by value (``register_pickle_by_value``): this module must import nothing of
convoscope, so that it runs where convoscope is missing and says so.
"""

from __future__ import annotations


def convoscope_version() -> tuple[str | None, str | None]:
    """(this node's convoscope version, None), or (None, why it cannot be imported)."""
    import importlib

    try:
        module = importlib.import_module("convoscope")
    except Exception as error:  # ImportError, or a broken install failing on import
        return None, f"{type(error).__name__}: {error}"
    return getattr(module, "__version__", None), None
