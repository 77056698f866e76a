"""Every shell and Python block in README.md and docs/*.md runs as written (the sqlite-utils habit).

The machinery; the tests are in tests/test_documented_*.py, one module per group of pages so that
the two workers of the suite (``-n 2 --dist loadfile``) share them: the blocks run the embedded
model for about ten minutes in all, too long for one worker beside the rest of the suite.

How blocks are collected and run (docs/contributing.md, "Writing docs", says the same for authors):

- A fenced block tagged ``bash``, ``sh``, ``shell`` or ``console`` (in a console block only the lines
  starting with ``$ `` are commands) runs in bash with ``-e -o pipefail``; a ``python`` block runs with
  this interpreter, as in a notebook (a top-level ``await`` is allowed). One test per block, its id the
  file and the line of the opening fence (``README.md:61``).
- The blocks of one page run in page order in one scratch folder that starts as a copy of ``examples/``
  (at ``examples/`` inside it): a reader follows a page top to bottom, so a block may use what an
  earlier block of its page wrote (``campaign init`` before ``campaign serve``). Whatever order or
  subset pytest runs, a block's test first replays the earlier blocks of its page it has not seen run
  in this process, so the result never depends on test order.
- ``convoscope`` on PATH is the one next to this interpreter. No network: every proxy variable points
  at a closed port on 127.0.0.1 (only 127.0.0.1 and localhost bypass it), API keys are removed from the
  environment, and HOME is a folder inside the scratch folder.
- ``<!-- docs-test: skip: REASON -->`` on the line just before a block's opening fence skips it with
  that reason. The reason must be real (needs an API key, a cluster); nothing else is skipped.
- ``<!-- docs-test: server -->`` there marks a block that starts a server running until stopped
  (``campaign serve``, ``view``): it gets a free port (``--port``), and passes once the address it
  prints answers HTTP; then it is stopped with Ctrl-C (SIGINT), as a reader would.
- ``<!-- docs-test: exit: 0 5 -->`` there lists the exit statuses a block may end with, for a
  command whose documented outcome depends on what the model says (a quality gate: 5 when the
  embedded judge scores below it). Any other status fails, as does 0 alone everywhere else.
- OpenAI-compatible endpoints: every ``openai:MODEL@URL`` spec in a block is pointed at the suite's
  llama.cpp server on SmolLM2 (``llama_server_chat`` in tests/conftest.py: no logprobs, as some
  endpoints are, and prompts 2.3 times faster than with them), keeping MODEL (the server
  answers any model name with its one model), and ``OPENAI_BASE_URL`` names that server, so
  ``openai:gpt-4o-mini`` reaches it too. Each ``convoscope judge`` there gets ``--timeout`` and
  ``--deadline`` from tests/patience.py: the server has one slot and the machine may be loaded, and
  a test never fails for slowness (with the defaults, 18 of 27 panel calls were ``model_error`` on a
  machine at load 20). A block naming an endpoint, or running the embedded model,
  is marked ``slow``.
- Smaller inputs: ``SMALLER`` below rewrites a few options of long blocks, each entry with its reason.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from patience import PATIENT_ARGS

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELLS = {"bash", "sh", "shell", "console"}
PYTHONS = {"python", "py"}
SKIP = re.compile(r"<!--\s*docs-test:\s*skip:\s*(?P<reason>.+?)\s*-->")
SERVER = re.compile(r"<!--\s*docs-test:\s*server\s*-->")
EXITS = re.compile(r"<!--\s*docs-test:\s*exit:\s*(?P<codes>[\d ]+?)\s*-->")
SERVING = re.compile(r"http://127\.0\.0\.1:(?P<port>\d+)")
SERVE_COMMAND = re.compile(
    r"^(?P<command>convoscope (?:campaign serve|view)\b[^#\n]*?)(?P<rest>\s*(?:#.*)?)$", re.MULTILINE)
OPENING = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)\s*$")
ENDPOINT = re.compile(r"openai:(?P<model>[\w.:/-]+?)@(?P<url>https?://[^\s'\"]+)")
# A block runs a model when it judges, scores, builds a card, simulates dialogues or asks for embeddings.
RUNS_A_MODEL = re.compile(r"\bjudge\b|survey score|\bcard\b|synth dialogues|embedding|pairwise|"
                          r"judge_card|cs\.judge|generate_dialogues")
ONE_SHORT_DIALOGUE = ("the offline loop takes minutes per dialogue on two cores; one English context with "
                      "two short turns shows every step runs")
# Long blocks run on less: (page, pattern, replacement, reason). Each must match (checked below).
SMALLER: list[tuple[str, str, str, str]] = [  # applied in this order
    ("docs/synth.md", "--n 2 --languages en,ko,pt,es,ja,zh", "--n 1 --languages en",
     "six languages take many minutes offline; one English context shows the command runs"),
    *[(page, old, new, ONE_SHORT_DIALOGUE) for page in ("README.md", "docs/synth.md")
      for old, new in [("--n 2 --languages en,ko", "--n 1 --languages en"),
                       ("--max-turns 4 --max-tokens 48", "--max-turns 2 --max-tokens 24")]],
    *[("docs/synth.md", old, new, ONE_SHORT_DIALOGUE)
      for old, new in [("--n 40 --languages en,pt,ko", "--n 1 --languages en"),
                       ("--chatbot embedded --out dialogues.jsonl",
                        "--chatbot embedded --max-turns 2 --max-tokens 24 --out dialogues.jsonl")]],
    ("docs/synth.md", "synth dialogues contexts.jsonl --out dialogues.jsonl",
     "synth dialogues contexts.jsonl --max-turns 2 --max-tokens 24 --out dialogues.jsonl",
     "ten utterances per dialogue take minutes offline; two show the defaults run"),
    ("docs/synth.md", 'sample_contexts(5, ["en", "ko"], seed=0)', 'sample_contexts(1, ["en"], seed=0)',
     "one English context shows the Python loop runs; five in two languages take many minutes"),
    ("docs/synth.md", "SynthSettings(max_turns=6)", "SynthSettings(max_turns=2)",
     "two turns show the Python loop runs"),
    ("README.md", "convoscope judge examples/response_candidates.jsonl --suite response-candidates",
     "convoscope judge examples/response_candidates.jsonl --limit 1 --suite response-candidates",
     "four rubrics on every candidate take minutes on the embedded model; one candidate shows it runs"),
    ("README.md", "judge examples/dialogues.jsonl --suite dialogue-issues \\\n",
     "judge examples/dialogues.jsonl --limit 1 --suite dialogue-issues \\\n",
     "three dialogues x nine rubrics x two judges is 54 calls (over three minutes on two cores); one "
     "dialogue shows the panel and its pooling run"),
    ("README.md", "examples/survey_answers.csv --id-col id --response-col answer --criterion survey/effort",
     "examples/survey_answers.csv --limit 3 --id-col id --response-col answer --criterion survey/effort",
     "three answers show the column options work as well as ten"),
    ("README.md", "examples/survey_answers.csv --response-col answer --criterion survey/effort",
     "examples/survey_answers.csv --limit 3 --response-col answer --criterion survey/effort",
     "the endpoint blocks show the options reach a server; three answers do that as well as ten"),
    ("docs/reports.md", "--suite dialogue-issues --one-call",
     "--criterion dialogue-issues:repetitive --criterion dialogue-issues:irrelevant --one-call",
     "the test server's context is 2,048 tokens (tests/models pin that figure) and nine rubrics in one "
     "prompt need more; two rubrics in one call show the one-call path runs"),
    ("docs/runs.md", "--suite survey --repeats 5", "--criterion survey:effort --repeats 2",
     "four criteria asked five times is 160 calls of the embedded model; one criterion twice shows "
     "the same self-consistency table"),
]
# Far above what any block takes: only a block that never ends meets it (DOCS_TEST_BLOCK_TIMEOUT
# shortens it, e.g. to count quickly how many blocks fail).
BLOCK_TIMEOUT_S = int(os.environ.get("DOCS_TEST_BLOCK_TIMEOUT", "1800"))
PYTHON_RUNNER = """\
import ast, asyncio, sys
source = sys.stdin.read()
code = compile(source, sys.argv[1], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
result = eval(code, {"__name__": "__main__"})
if asyncio.iscoroutine(result):
    asyncio.run(result)
"""


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository, e.g. "docs/runs.md"
    line: int  # of the opening fence
    lang: str
    text: str
    skip_reason: str | None
    server: bool = False
    exits: tuple[int, ...] = (0,)

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def collect_blocks(path: Path, root: Path = ROOT) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = OPENING.match(lines[index])
        if not opening:
            index += 1
            continue
        indent = len(opening["indent"])
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        lang = opening["lang"].lower()
        if lang in SHELLS | PYTHONS:
            body = "\n".join(line[indent:] if not indent or line[:indent].isspace() else line.lstrip()
                              for line in lines[index + 1:end])
            before = lines[index - 1] if index else ""
            skip = SKIP.search(before)
            exits = EXITS.search(before)
            blocks.append(Block(str(path.relative_to(root)), index + 1, lang, body + "\n",
                                skip["reason"] if skip else None, bool(SERVER.search(before)),
                                tuple(int(code) for code in exits["codes"].split()) if exits else (0,)))
        index = end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in collect_blocks(page)]


def needs_endpoint(block: Block) -> bool:
    return bool(ENDPOINT.search(block.text)) or "openai:" in block.text


def runs_a_model(block: Block) -> bool:
    return needs_endpoint(block) or bool(RUNS_A_MODEL.search(block.text))


def as_written_here(block: Block, base_url: str | None) -> str:
    """The block's text with the documented substitutions: smaller inputs and the local endpoint."""
    text = block.text
    for page, pattern, replacement, _reason in SMALLER:
        if page == block.page:
            text = text.replace(pattern, replacement)
    if base_url:
        text = ENDPOINT.sub(lambda match: f"openai:{match['model']}@{base_url}", text)
        text = re.sub(r"\bconvoscope judge ", f"convoscope judge {' '.join(PATIENT_ARGS)} ", text)
    if block.lang == "console":
        text = "\n".join(line[2:] for line in text.splitlines() if line.startswith("$ ")) + "\n"
    return text


def block_environment(folder: Path, base_url: str | None) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           if not name.endswith(("_API_KEY", "_TOKEN", "_KEY")) and not name.lower().endswith("_proxy")}
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens, so a request fails at once
    env.update(HTTP_PROXY=closed, HTTPS_PROXY=closed, ALL_PROXY=closed, http_proxy=closed,
               https_proxy=closed, all_proxy=closed, NO_PROXY="127.0.0.1,localhost",
               no_proxy="127.0.0.1,localhost", HOME=str(folder / ".home"), HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", PIP_NO_INDEX="1", PYTHONUNBUFFERED="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if base_url:
        env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-docs-test")
    env["CONVOSCOPE_CACHE"] = str(shared_cache(folder))
    return env


def shared_cache(folder: Path) -> Path:
    """One response cache for every block of the session, both test workers included (their
    scratch folders share the session's base folder): several pages judge the same examples with
    the same models (the survey wave in README.md and docs/survey.md, the rated items in README.md
    and docs/metaeval.md), and a deterministic model gives a cached answer equal to a new one, so only the
    first of them pays for the calls; which one that is never changes a result."""
    session = folder.parent.parent if os.environ.get("PYTEST_XDIST_WORKER") else folder.parent
    return session / "documented-blocks.cache.db"


@dataclass
class Page:
    """One page's scratch folder and which of its blocks have run there, in order."""

    folder: Path
    ran: list[int] = field(default_factory=list)


def free_port() -> int:
    """A port free now on 127.0.0.1 (not imported from a conftest: several test folders have one, and
    which module is ``conftest`` depends on what ran before)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def on_a_free_port(text: str) -> str:
    """Each serving command with ``--port`` set to a free port (a fixed one may be taken here)."""

    def with_port(match: re.Match[str]) -> str:
        command = re.sub(r"\s--port[ =]\d+", "", match["command"].rstrip())
        return f"{command} --port {free_port()}{match['rest']}"

    return SERVE_COMMAND.sub(with_port, text)


def serve_until_it_answers(command: list[str], text: str, folder: Path,
                           env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a serving block until the address it prints answers HTTP, then stop it with Ctrl-C.
    Passes (exit 0) once it answered; otherwise the block's own exit status and output."""
    import httpx

    log_path = folder / ".home" / "server.log"
    with open(log_path, "w+", encoding="utf-8") as log:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                   cwd=folder, env=env, text=True, start_new_session=True)
        assert process.stdin is not None
        process.stdin.write(text)
        process.stdin.close()
        answered, deadline = False, time.monotonic() + BLOCK_TIMEOUT_S
        try:
            while not answered and process.poll() is None and time.monotonic() < deadline:
                address = SERVING.search(log_path.read_text(encoding="utf-8"))
                if address:
                    try:
                        httpx.get(f"http://127.0.0.1:{address['port']}/", timeout=5, trust_env=False)
                        answered = True
                    except httpx.TransportError:
                        pass
                time.sleep(0.2)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        output = log_path.read_text(encoding="utf-8")
    code = 0 if answered else (process.returncode or 1)
    return subprocess.CompletedProcess(command, code, output, "" if answered else "never answered HTTP")


def run_block(block: Block, folder: Path, base_url: str | None) -> subprocess.CompletedProcess[str]:
    text = as_written_here(block, base_url)
    env = block_environment(folder, base_url)
    if block.server:
        return serve_until_it_answers(["bash", "-e", "-o", "pipefail", "-s"], on_a_free_port(text),
                                      folder, env)
    if block.lang in PYTHONS:
        command = [sys.executable, "-c", PYTHON_RUNNER, block.name]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-s"]
    try:
        return subprocess.run(command, input=text, cwd=folder, env=env, capture_output=True, text=True,
                              timeout=BLOCK_TIMEOUT_S)
    except subprocess.TimeoutExpired as stopped:
        output = stopped.stdout or b""
        output = output.decode(errors="replace") if isinstance(output, bytes) else output
        return subprocess.CompletedProcess(command, -1, output,
                                           f"still running after {BLOCK_TIMEOUT_S} s (a server? see "
                                           "'docs-test: server' in tests/documented.py)")


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Page]:
    return {}


def fresh_page(tmp_path_factory, block: Block) -> Page:
    folder = tmp_path_factory.mktemp(re.sub(r"\W", "-", block.page))
    shutil.copytree(ROOT / "examples", folder / "examples")
    (folder / ".home").mkdir()
    return Page(folder)


def block_params(wanted: Callable[[str], bool]):
    for block in BLOCKS:
        if not wanted(block.page):
            continue
        marks = [pytest.mark.slow] if runs_a_model(block) else []
        if block.skip_reason:
            marks.append(pytest.mark.skip(reason=block.skip_reason))
        yield pytest.param(block, id=block.name, marks=marks)


def run_documented_block(block: Block, pages: dict[str, Page], tmp_path_factory, request) -> None:
    """Run one block in its page's folder, after replaying the page's earlier blocks not yet run."""
    same_page = [other for other in BLOCKS if other.page == block.page and not other.skip_reason]
    position = same_page.index(block)
    page = pages.get(block.page)
    if page is None or (page.ran and page.ran[-1] >= position):
        page = pages[block.page] = fresh_page(tmp_path_factory, block)
    base_url = request.getfixturevalue("llama_server_chat")[0] if any(
        needs_endpoint(other) for other in same_page[:position + 1]) else None
    for earlier in range(len(page.ran), position):  # replay what this page's reader did before
        run_block(same_page[earlier], page.folder, base_url)
        page.ran.append(earlier)
    done = run_block(block, page.folder, base_url)
    page.ran.append(position)
    assert done.returncode in block.exits, (
        f"{block.name} exited {done.returncode}\n--- block as run ---\n{as_written_here(block, base_url)}"
        f"--- stdout ---\n{done.stdout[-3000:]}\n--- stderr ---\n{done.stderr[-3000:]}")
