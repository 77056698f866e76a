"""Judges written in Python: a function or a class, on the same contract as model judges.

A Python judge is called with ``(item, criterion)`` (plus its bound keyword parameters) and
returns one of:

* a value on the criterion's scale: an ``int`` (or ``bool`` for a binary scale), a label
  ``str``, or a ``float`` on a numeric scale (kept in ``expected_value``; ``value`` is the
  nearest scale value);
* ``(value, explanation)``: the same, with the explanation kept as the verdict's reason;
* :class:`Unscored` ``(explanation, reason=...)``: no score, and why;
* a :class:`Verdict`, for full control (its item, criterion and rater are set by the judge).

Sync functions run in a worker thread (blocking code does not stall the run), async ones on
the event loop. Whatever the function raises becomes an unscored verdict, never a crashed run:
``ModelError`` is ``model_error`` (transient: a re-run retries it), any other exception
``judge_error`` with the traceback's last line in ``raw`` (``--retry-unscored`` retries it).
Resume keys hash the judge's declared ``name``, ``version`` and parameters with the item and
criterion, and, for a judge that comes from an installed distribution (a plug-in package), that
distribution's name and version: upgrading the package judges again instead of serving the old
package's verdicts. Bump ``version`` when the code's answers change without a new release.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
import json
import math
import numbers
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, overload

from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import Item
from convoscope.judges._rater import RaterKind
from convoscope.judges._verdict import UnscoredReason, Verdict

SPEC_PREFIX = "python:"
_FACTORY = "__convoscope_judge_factory__"


@dataclass(frozen=True)
class Unscored:
    """What a Python judge returns when it gives no score: why, in words, and the reason code
    (``not_applicable`` by default; ``idk``, ``refusal`` or ``parse_failure`` where they fit)."""

    explanation: str
    reason: UnscoredReason = "not_applicable"


@dataclass(frozen=True)
class PythonJudge:
    """A judge made from Python code (see the module docstring for what ``function`` returns).

    ``name`` and ``version`` are declared by the author: the rater is ``python:NAME`` and both
    are part of every resume key. ``params`` are passed to ``function`` as keyword arguments on
    every call (as scikit-learn's ``make_scorer`` does); ``init`` records the arguments a
    judge class was built with. Both are part of the key too.
    """

    function: Callable[..., Any]
    name: str
    version: str = "0"
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    init: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise ConfigError(f"Python judge {self.name!r}: {self.function!r} is not callable")
        if not self.name or any(character.isspace() for character in self.name):
            raise ConfigError(f"a Python judge needs a name without spaces, not {self.name!r}")

    @property
    def rater(self) -> str:
        return RaterKind.PYTHON.rater(self.name)

    def identity(self) -> dict[str, Any]:
        found = {"kind": "python", "name": self.name, "version": str(self.version),
                 "params": _stable(dict(self.params)), "init": _stable(dict(self.init))}
        if self.package:  # absent for code that is not installed: its keys stay as they were
            found["package"] = self.package
        return found

    @functools.cached_property
    def package(self) -> list[str]:
        """``name==version`` of the installed distribution(s) the judge's code comes from (found
        once, when first asked: never at import), or an empty list for code not installed."""
        from convoscope.judges._packages import distributions_of

        return distributions_of(self.function)

    async def __call__(self, item: Item, criterion: Criterion) -> Verdict:
        started = time.perf_counter()
        try:
            result = await self._run(item, criterion)
            fields = _fields_from(result, criterion)
        except Exception as error:  # noqa: BLE001 - failures of user code are data
            fields = _failure(error)
        return self._verdict(item, criterion, latency_s=time.perf_counter() - started, **fields)

    async def _run(self, item: Item, criterion: Criterion) -> Any:
        if _is_async(self.function):
            result = self.function(item, criterion, **self.params)
        else:
            result = await asyncio.to_thread(self.function, item, criterion, **self.params)
        return await result if inspect.isawaitable(result) else result

    def _verdict(self, item: Item, criterion: Criterion, **fields: Any) -> Verdict:
        given = fields.pop("verdict", None)
        own: dict[str, Any] = {"item_id": item.id, "criterion": criterion.name, "rater": self.rater}
        if given is not None:
            return given.model_copy(update={**own, "latency_s": given.latency_s or fields.get("latency_s"),
                                            "language": given.language or item.language,
                                            "system": given.system or item.system})
        return Verdict(**own, language=item.language, system=item.system, **fields)


def make_judge(function: Callable[..., Any], /, *, name: str | None = None, version: str | None = None,
               **params: Any) -> PythonJudge:
    """A judge from a function, a callable object, or an existing Python judge (like scikit-learn's
    ``make_scorer``): ``params`` are passed to it on every call and are part of its identity.

    >>> judge = make_judge(lambda item, criterion, *, word: int(word in item.response.lower()),
    ...                    name="mentions", version="1", word="thanks")
    >>> judge.rater, judge.identity()["params"]
    ('python:mentions', {'word': 'thanks'})
    """
    if isinstance(function, PythonJudge):
        return replace(function, name=name or function.name, version=version or function.version,
                       params={**function.params, **params})
    default = getattr(function, "__name__", None) or type(function).__name__
    return PythonJudge(function, name or default, version or "0", params)


@overload
def python_judge(target: Callable[..., Any], /) -> Any: ...
@overload
def python_judge(*, name: str | None = None, version: str = "0") -> Callable[[Callable[..., Any]], Any]: ...


def python_judge(target: Callable[..., Any] | None = None, /, *, name: str | None = None,
                 version: str = "0") -> Any:
    """Decorator (as Inspect AI's ``@scorer``): a function becomes a :class:`PythonJudge`; a class
    becomes a factory whose calls build the instance and return it as a judge, recording the
    arguments in the judge's identity. ``@python_judge`` or ``@python_judge(name=..., version=...)``.
    """
    def decorate(obj: Callable[..., Any]) -> Any:
        if not inspect.isclass(obj):
            return PythonJudge(obj, name or obj.__name__, version)
        judge_class: Any = obj

        @functools.wraps(judge_class, updated=())
        def factory(*args: Any, **kwargs: Any) -> PythonJudge:
            bound = inspect.signature(judge_class).bind(*args, **kwargs)
            bound.apply_defaults()
            return PythonJudge(judge_class(*args, **kwargs), name or judge_class.__name__, version,
                               init=dict(bound.arguments))

        setattr(factory, _FACTORY, True)
        return factory

    return decorate(target) if target is not None else decorate


def as_judge(obj: Any, *, source: str = "") -> Any:
    """A judge from what a module or entry point holds: a judge (Python or any object with
    ``rater``, ``identity`` and an async call), a decorated judge class (built with its defaults),
    a plain class (instantiated), or a function."""
    where = f"{source}: " if source else ""
    if getattr(obj, _FACTORY, False) or inspect.isclass(obj):
        try:
            obj = obj()
        except TypeError as error:
            raise ConfigError(f"{where}the judge class needs arguments ({error}); build it in Python "
                              "and pass the judge to convoscope.judge") from None
        if isinstance(obj, PythonJudge):
            return obj
    if isinstance(obj, PythonJudge) or _is_judge_object(obj):
        return obj
    if callable(obj):
        return make_judge(obj)
    raise ConfigError(f"{where}{type(obj).__name__} is neither a judge nor a function")


def load_judge(spec: str) -> Any:
    """The judge a ``python:`` spec names: ``python:package.module:name`` (imported; ``name`` may
    be dotted) or ``python:NAME`` (an entry point of group ``convoscope.judges``)."""
    from convoscope._entry_points import JUDGES, entry_point_names, load_entry_point

    target = spec.removeprefix(SPEC_PREFIX)
    if ":" not in target:
        found = load_entry_point(JUDGES, target)
        if found is None:
            installed = ", ".join(entry_point_names(JUDGES)) or "none installed"
            raise ConfigError(f"judge {spec!r}: no {JUDGES} entry point {target!r} ({installed}); "
                              "or give python:package.module:name")
        return as_judge(found, source=spec)
    module_name, _, attribute = target.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise ConfigError(f"judge {spec!r}: cannot import {module_name!r} ({error}); is its package "
                          "installed, or its folder on PYTHONPATH?") from None
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"judge {spec!r}: {module_name} has no {attribute!r}")
        obj = getattr(obj, part)
    return as_judge(obj, source=spec)


def is_python_spec(spec: object) -> bool:
    return isinstance(spec, str) and spec.startswith(SPEC_PREFIX)


def python_judge_for(entry: Any) -> Any:
    """The judge for one entry of a run's judge list that is not a model: a ``python:`` spec
    (given as a string or as a ``JudgeSpec``, which may not carry a persona) or a built judge."""
    spec = getattr(entry, "model", entry)
    if not isinstance(spec, str):
        return as_judge(entry)
    if getattr(entry, "persona", None):
        raise ConfigError(f"judge {spec!r}: a persona is told to a model; a Python judge takes none")
    return load_judge(spec)


def _is_judge_object(obj: Any) -> bool:
    return (not inspect.isroutine(obj) and hasattr(obj, "rater") and callable(getattr(obj, "identity", None))
            and _is_async(obj))


def _is_async(function: Callable[..., Any]) -> bool:
    call: Any = function
    if not inspect.isroutine(call) and not isinstance(call, functools.partial):
        call = next((vars(kind)["__call__"] for kind in type(function).__mro__ if "__call__" in vars(kind)),
                    call)
    while isinstance(call, functools.partial):
        call = call.func
    return inspect.iscoroutinefunction(call)


def _fields_from(result: Any, criterion: Criterion) -> dict[str, Any]:
    """Verdict fields from what the function returned (see the module docstring)."""
    if isinstance(result, Verdict):
        if result.value is not None and criterion.scale.coerce(result.value) != result.value:
            return _contract(f"returned a Verdict whose value {result.value!r} is not on the scale "
                             f"({_describe(criterion)})")
        return {"verdict": result}
    if isinstance(result, Unscored):
        return {"value": None, "unscored_reason": result.reason, "reason": result.explanation}
    explanation = None
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], str | None):
        result, explanation = result
    if result is None:
        return _contract("returned None: return a score, a label, (value, explanation), "
                         "Unscored(...) or a Verdict")
    value, expected = _on_scale(result, criterion)
    if value is None:
        return _contract(f"returned {result!r}, which is not on the scale ({_describe(criterion)})")
    return {"value": value, "expected_value": expected, "reason": explanation}


def _on_scale(result: Any, criterion: Criterion) -> tuple[int | str | None, float | None]:
    scale = criterion.scale
    if isinstance(result, numbers.Integral) and not isinstance(result, bool):
        result = int(result)  # numpy integers too
    elif isinstance(result, numbers.Real) and not isinstance(result, bool):
        number = float(result)
        if number.is_integer():
            result = int(number)
        else:
            values = [float(value) for value in scale.values()] if scale.is_numeric() else []
            if not values or not min(values) <= number <= max(values):
                return None, None
            return math.floor(number + 0.5), number  # halves round up, as panels pool a mean
    if isinstance(result, int | bool | str) and not (isinstance(result, bool) and scale.kind != "binary"):
        return scale.coerce(result), None
    return None, None


def _describe(criterion: Criterion) -> str:
    values = criterion.scale.values()
    return f"{criterion.name}: one of {', '.join(map(str, values))}"


def _contract(problem: str) -> dict[str, Any]:
    return {"value": None, "unscored_reason": "judge_error", "raw": problem}


def _failure(error: Exception) -> dict[str, Any]:
    """``model_error`` for a ModelError (transient), else ``judge_error`` with the traceback's last
    line and where it was raised."""
    from convoscope.models import ModelError

    last = traceback.format_exception_only(type(error), error)[-1].strip()
    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno} in {frames[-1].name})" \
        if frames else ""
    reason = "model_error" if isinstance(error, ModelError) else "judge_error"
    return {"value": None, "unscored_reason": reason, "raw": last + where}


def _stable(value: Any) -> Any:
    """JSON-safe and the same in every process (for resume keys): plain values as they are,
    other objects by their repr unless it holds a memory address, then by their type."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(key): _stable(inner) for key, inner in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_stable(inner) for inner in value]
        return sorted(items, key=json.dumps) if isinstance(value, set | frozenset) else items
    text = repr(value)
    if " at 0x" in text:
        return f"{type(value).__module__}.{type(value).__qualname__}"
    return text
