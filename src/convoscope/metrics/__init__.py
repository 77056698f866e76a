"""Traditional KPIs computed directly from the log (latency, answer length) as Verdicts."""

from convoscope.metrics._lines import item_lines
from convoscope.metrics._metrics import (
    METRICS,
    Metric,
    MetricJudge,
    answer_length,
    check_metric_inputs,
    compute_metric,
    latency,
    metric_of,
)
from convoscope.metrics._time import Instant, TimestampError, parse_instant, response_latency

__all__ = [
    "METRICS",
    "Instant",
    "Metric",
    "MetricJudge",
    "TimestampError",
    "answer_length",
    "check_metric_inputs",
    "compute_metric",
    "item_lines",
    "latency",
    "metric_of",
    "parse_instant",
    "response_latency",
]
