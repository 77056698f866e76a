"""``python -m convoscope`` is the same as the ``convoscope`` command."""

from convoscope.cli import main

main()
