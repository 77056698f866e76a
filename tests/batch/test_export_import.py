"""Self-hosted batch: `convoscope batch export` writes the run's pending requests as OpenAI-batch
JSONL files, a runner answers them with the real llama.cpp server (standing for vLLM's
``run_batch``, which reads and writes this format), and `convoscope batch import` turns the result
files into the same verdicts a live run stores — resumable and exactly once."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.store import Store
from convoscope.store._batches import BatchLedger

sys.path.insert(0, str(Path(__file__).parents[1]))
from patience import PATIENT_ARGS, PATIENT_S  # noqa: E402

pytestmark = pytest.mark.slow
_register()
# Everything a verdict row says about the answer and its request; not the run's timing or cost.
COMPARED = ("item_id", "criterion", "rater", "value", "unscored_reason", "reason", "raw", "distribution",
            "expected_value", "completion_tokens",
            "prompt_tokens", "served_model", "seed", "temperature")


# A short request unlike any judged one. llama-cpp-python reuses the KV cache of the longest prefix a
# prompt shares with the last one; a prompt identical to the last (its answer's tokens still cached)
# came out with other numerics: the score distribution moved by 0.016 (CI, when the runner answered
# s2 right after the live run's s2; reproduced by answering the file last line first).
UNRELATED = {"model": "smollm2", "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 1}


def run_batch(input_file: Path, output_file: Path, base_url: str) -> None:
    """What vLLM's run_batch does with an input file: each line's body to its endpoint, one
    output line per request (``id``, ``custom_id``, ``response`` with ``status_code``,
    ``request_id`` and ``body``, ``error``). Lines are answered last first (a runner's order is
    its own), each after ``UNRELATED``, so no answer depends on what was sent before it."""
    rows = []
    with httpx.Client(base_url=base_url.removesuffix("/v1"), timeout=PATIENT_S) as client:
        for line in reversed(input_file.read_text().splitlines()):
            client.post("/v1/chat/completions", json=UNRELATED).raise_for_status()
            request = json.loads(line)
            answer = client.post(request["url"], json=request["body"])
            ok = answer.status_code == 200
            rows.append({"id": f"vllm-{uuid.uuid4().hex}", "custom_id": request["custom_id"],
                         "response": {"status_code": answer.status_code, "request_id": uuid.uuid4().hex,
                                      "body": answer.json() if ok else None},
                         "error": None if ok else answer.text})
    output_file.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_export_run_elsewhere_import_gives_the_verdicts_of_the_live_run(llama_server, tmp_path):
    base_url, alias = llama_server
    common = ["examples/survey_items.jsonl", "--criterion", "survey/relevance", "--limit", "2",
              "--judge", f"openai:{alias}@{base_url}", "--max-tokens", "24", *PATIENT_ARGS]

    def invoke(*args):
        return CliRunner().invoke(cli, list(args), env={"COLUMNS": "200"})

    # One request at a time, as the runner below sends them: llama.cpp computes requests it
    # batches together with other numerics, which can flip a greedy token (seen once in CI). The
    # test before may have sent one of these prompts last (see UNRELATED).
    httpx.post(f"{base_url}/chat/completions", json=UNRELATED, timeout=PATIENT_S).raise_for_status()
    live = invoke("judge", *common, "--concurrency", "1", "--store", str(tmp_path / "live.db"),
                  "--out", str(tmp_path / "live.jsonl"))
    assert live.exit_code in (0, 4), live.output
    # The offline run: its own store; llama.cpp reads the schema beside json_object.
    offline = [*common, "--store", str(tmp_path / "offline.db")]
    exported = invoke("batch", "export", *offline, "--to", str(tmp_path / "batches"),
                      "--response-format", "json_object")
    assert exported.exit_code == 3, exported.output
    (batch_file,) = (tmp_path / "batches").glob("*.jsonl")
    lines = [json.loads(line) for line in batch_file.read_text().splitlines()]
    assert len(lines) == 2 and {line["url"] for line in lines} == {"/v1/chat/completions"}
    again = invoke("batch", "export", *offline, "--to", str(tmp_path / "batches"))
    assert again.exit_code == 3 and len(list((tmp_path / "batches").glob("*.jsonl"))) == 1  # nothing twice

    results = tmp_path / "results"
    results.mkdir()
    run_batch(batch_file, tmp_path / "all.jsonl", base_url)
    answers = (tmp_path / "all.jsonl").read_text().splitlines(keepends=True)
    (results / "part-1.jsonl").write_text("".join(answers[:1]))
    first = invoke("batch", "import", *offline, "--results", str(results / "part-1.jsonl"),
                   "--out", str(tmp_path / "offline-1.jsonl"))
    assert first.exit_code == 3, first.output  # one answer still to come: resumable
    (results / "part-2.jsonl").write_text("".join(answers[1:]))
    second = invoke("batch", "import", *offline, "--results", str(results), "--out",
                    str(tmp_path / "offline.jsonl"))
    assert second.exit_code == live.exit_code, second.output
    assert "1 already imported" in second.output  # part 1 was read again: its answer kept once

    def verdicts(name):
        rows = [json.loads(line) for line in (tmp_path / name).read_text().splitlines()]
        return sorted(({field: row[field] for field in COMPARED} for row in rows), key=lambda r: r["item_id"])

    offline_rows, live_rows = verdicts("offline.jsonl"), verdicts("live.jsonl")
    # Exactly: both sides got each answer on a server whose last prompt was another (UNRELATED).
    assert offline_rows == live_rows
    third = invoke("batch", "import", *offline, "--results", str(results))
    assert "2 already imported" in third.output and third.exit_code == live.exit_code  # exactly once
    store = Store(tmp_path / "offline.db")
    try:
        (job,) = BatchLedger(store.engine).jobs()
    finally:
        store.close()
    assert (job.state, job.provider_status, job.answered) == ("collected", "imported", 2)
    status = invoke("batch", "status", "--all", "--store", str(tmp_path / "offline.db"))
    assert "imported" in status.output and job.job_id[:12] in status.output, status.output


def test_a_result_line_the_ledger_does_not_know_is_a_located_error(tmp_path):
    result = tmp_path / "results.jsonl"
    result.write_text('{"custom_id": "' + "0" * 64 + '", "response": {"status_code": 200, "body": {}}}\n')
    Store(tmp_path / "s.db").close()  # import reads an existing store's ledger (it never creates one)
    answer = CliRunner().invoke(cli, [
        "batch", "import", "examples/survey_items.jsonl", "--criterion", "survey/relevance",
        "--judge", "openai:m@http://127.0.0.1:9/v1", "--store", str(tmp_path / "s.db"),
        "--results", str(result)])
    assert answer.exit_code == 2
    assert f"{result}, line 1, field 'custom_id'" in answer.output and "not in this store" in answer.output
