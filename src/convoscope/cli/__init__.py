"""The ``convoscope`` command line: thin shells over one library call each."""

from convoscope.cli._app import cli, main

__all__ = ["cli", "main"]
