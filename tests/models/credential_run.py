"""Run ``convoscope judge`` in this process with a span exporter and a log file of its own, then
write the finished spans as JSON (used by test_credentials.py, in a subprocess of its own so
that the process-wide tracer provider and logging are not the test runner's).

Usage: python credential_run.py SPANS.json LOG.txt -- convoscope judge arguments...
"""

from __future__ import annotations

import json
import logging
import sys

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

spans_path, log_path, _, *arguments = sys.argv[1:]
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
logging.basicConfig(filename=log_path, level=logging.DEBUG)  # every library's records, debug included

from convoscope.cli._app import cli  # noqa: E402

code: object = 0
try:
    cli.main(arguments, prog_name="convoscope")
except SystemExit as stop:
    code = stop.code
finally:
    provider.force_flush()
    spans = [{"name": span.name, "attributes": dict(span.attributes or {}),
              "status": str(span.status.description), "events": [
                  {"name": event.name, "attributes": dict(event.attributes or {})} for event in span.events]}
             for span in exporter.get_finished_spans()]
    with open(spans_path, "w", encoding="utf-8") as handle:
        json.dump(spans, handle, default=str)
sys.exit(code if isinstance(code, int) else 1)
