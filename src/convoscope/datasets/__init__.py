"""Public dialogue-evaluation benchmarks with human ratings, as Items and human Verdicts.

``load_benchmark("fed-turn", "data/fed")`` reads a benchmark from the files its authors publish
(nothing is downloaded); ``write_benchmark`` writes the items and the human verdicts as JSONL
for ``convoscope judge`` and ``convoscope metaeval --human``.
"""

from convoscope.datasets._benchmark import Benchmark, Granularity, write_benchmark
from convoscope.datasets._registry import (
    BenchmarkLoader,
    list_benchmarks,
    load_benchmark,
    register_benchmark,
)

__all__ = [
    "Benchmark",
    "BenchmarkLoader",
    "Granularity",
    "list_benchmarks",
    "load_benchmark",
    "register_benchmark",
    "write_benchmark",
]
