"""The benchmark registry: a name -> loader table, with the built-in loaders and the user's own.

A loader is any callable ``(path) -> Benchmark`` (the Protocol below); ``register_benchmark``
adds one, so a team's in-house rated logs load through the same door as FED or USR.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from convoscope.datasets import _abc, _conture, _fed, _grade, _ji2022, _maia, _usr
from convoscope.datasets._benchmark import Benchmark
from convoscope.errors import ConfigError


class BenchmarkLoader(Protocol):
    """Reads a benchmark from a file or folder; malformed input raises ItemError (file, line, field)."""

    def __call__(self, path: Path, /) -> Benchmark: ...


@dataclass(frozen=True)
class _Entry:
    loader: BenchmarkLoader
    description: str


_BUILT_IN: dict[str, _Entry] = {
    "fed-turn": _Entry(_fed.load_fed_turn, "FED turn level: 375 responses, 9 qualities x 5 AMT workers"),
    "fed-dialogue": _Entry(_fed.load_fed_dialogue, "FED dialogue level: 125 dialogues, 11 qualities x 5"),
    "usr-topicalchat": _Entry(_usr.load_usr_topicalchat, "USR Topical-Chat: 360 responses, 6 qualities x 3"),
    "usr-personachat": _Entry(_usr.load_usr_personachat, "USR PersonaChat: 300 responses, 6 qualities x 3"),
    "grade": _Entry(_grade.load_grade, "GRADE: 1,200 responses, coherence 1-5 x 8-11 AMT workers"),
    "conture-turn": _Entry(_conture.load_conture_turn, "ConTurE: 1,066 chatbot turns, overall impression "
                                                       "0-2 (majority label)"),
    "conture-dialogue": _Entry(_conture.load_conture_dialogue, "ConTurE / DSTC9: 119 dialogues, "
                                                               "11 qualities x 3 workers"),
    "abc-eval": _Entry(_abc.load_abc_eval, "ABC-Eval: 1,634 bot turns, 9 binary behaviours x 2 people "
                                           "(+ GPT-3.5 labels)"),
    "maia-dqe-turn": _Entry(_maia.load_maia_turn, "MAIA-DQE: customer-support turns (de, pt), "
                                                  "understanding / sensibleness / politeness / IQ"),
    "maia-dqe-sentence": _Entry(_maia.load_maia_sentence, "MAIA-DQE: sentences, correctness / templated / "
                                                          "engagement / emotion"),
    "maia-dqe-dialogue": _Entry(_maia.load_maia_dialogue, "MAIA-DQE: dialogues, task success and dropped"),
    "ji2022": _Entry(_ji2022.load_ji2022, "Ji et al. 2022: conversations rated 0-100 on 7 criteria "
                                          "(workers who passed quality control)"),
    "ji2022-all": _Entry(_ji2022.load_ji2022_all, "Ji et al. 2022: as ji2022, plus workers who failed "
                                                  "quality control"),
}
_registered: dict[str, _Entry] = {}


def register_benchmark(name: str, loader: BenchmarkLoader, *, description: str = "") -> None:
    """Make ``load_benchmark(name, path)`` use ``loader``; a built-in name cannot be replaced."""
    if not name or name != name.strip() or " " in name:
        raise ValueError(f"a benchmark name is one word without spaces, not {name!r}")
    if name in _BUILT_IN:
        raise ValueError(f"'{name}' is a built-in benchmark; register yours under another name")
    if not callable(loader):
        raise ValueError(f"the loader for '{name}' must be callable as loader(path) -> Benchmark")
    _registered[name] = _Entry(loader, description or (loader.__doc__ or "").strip().split("\n")[0])


def list_benchmarks() -> dict[str, str]:
    """Every benchmark name with a one-line description, built-ins first."""
    return {name: entry.description for name, entry in {**_BUILT_IN, **_registered}.items()}


def load_benchmark(name: str, path: str | Path, *, reference_free: bool = False) -> Benchmark:
    """Load benchmark ``name`` from ``path``: its file, its folder, or a data collection's root
    that holds the benchmark's usual folder (e.g. ``fed/``). ``reference_free=True`` drops the
    items' reference turns (see :meth:`Benchmark.without_references`)."""
    entry = _registered.get(name) or _BUILT_IN.get(name)
    if entry is None:
        known = ", ".join(list_benchmarks())
        raise ConfigError(f"unknown benchmark '{name}' (known: {known})")
    benchmark = entry.loader(Path(path))
    return benchmark.without_references() if reference_free else benchmark
