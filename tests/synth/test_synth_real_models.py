"""Generation on real models: the embedded SmolLM2 in-process, and the llama.cpp OpenAI-compatible
server on 127.0.0.1. Tiny on purpose (one short dialogue each, few tokens): these check that the
parts work together on real output, not the quality of a 135M model's dialogues."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from patience import PATIENT_S

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import read_items
from convoscope.synth import SynthSettings, default_filtered_path, generate_dialogues_async, sample_contexts

pytest.importorskip("llama_cpp")

SMALL = SynthSettings(max_turns=4, first_turn_attempts=2, later_turn_attempts=2, user_max_tokens=24,
                      chatbot_max_tokens=24, judge_max_tokens=16)


def written(out):
    paths = [out, default_filtered_path(out)]
    return [item for path in paths if path.exists() for item in read_items(path)]


@pytest.mark.slow
async def test_embedded_user_judge_and_chatbot_make_a_dialogue_and_resume(tmp_path):
    from convoscope.models import EmbeddedModel

    model = EmbeddedModel(n_threads=2)
    context = sample_contexts(1, ["en"], seed=2)
    out = tmp_path / "dialogues.jsonl"
    try:
        summary = await generate_dialogues_async(context, users={"smol": model}, judge=model,
                                                 chatbots={"smol": model}, out=out, settings=SMALL)
    finally:
        await model.aclose()
    [item] = written(out)
    synth = item.meta["synth"]
    assert summary.written == 1 and item.id == "en-0001.smol.smol"
    # the judge (next-token yes/no) saw every attempt that passed the rules, within the limits
    opening = synth["user_turns"][0]
    assert 1 <= len(opening["attempts"]) <= 2
    judged = sum(a["checked_by"] == "judge" for log in synth["user_turns"] for a in log["attempts"])
    judge_calls = synth["usage"].get("judge", {}).get("calls", 0) + synth["opening"]["usage"].get(
        "judge", {}).get("calls", 0)
    assert judged == judge_calls and judge_calls >= 1
    assert len(item.context) <= 4
    assert all(t.speaker == ("user" if i % 2 == 0 else "chatbot") for i, t in enumerate(item.context))
    bot_turns = sum(t.speaker == "chatbot" for t in item.context)
    assert synth["usage"].get("chatbot", {}).get("calls", 0) == bot_turns
    if item.context:
        assert synth["filter"]["language"]["method"] in ("py3langid", "script")
    # a second run finds the dialogue done and makes no model call at all
    again = EmbeddedModel(n_threads=2)
    resumed = await generate_dialogues_async(context, users={"smol": again}, judge=again,
                                             chatbots={"smol": again}, out=out, settings=SMALL)
    assert resumed.already_done == 1 and resumed.written == 0 and again._llama is None


@pytest.mark.slow
def test_cli_against_an_openai_compatible_server(llama_server_chat, tmp_path):
    base_url, alias = llama_server_chat
    _register()
    contexts, out = tmp_path / "contexts.jsonl", tmp_path / "dialogues.jsonl"
    runner = CliRunner()
    assert runner.invoke(cli, ["synth", "contexts", "--n", "1", "--languages", "en", "--seed", "4",
                               "--out", str(contexts)]).exit_code == 0
    args = ["synth", "dialogues", str(contexts), "--user", f"openai:{alias}@{base_url}", "--judge", "none",
            "--chatbot", f"bot=openai:{alias}@{base_url}", "--max-turns", "2", "--max-tokens", "24",
            "--first-turn-attempts", "2", "--out", str(out)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    [item] = written(out)
    assert item.system == "bot" and item.meta["synth"]["chatbot_model"] == f"openai:{alias}@{base_url}"
    if item.context:  # the user's opening passed the rule checks
        assert [t.speaker for t in item.context] == ["user", "chatbot"]
        assert item.meta["synth"]["usage"]["chatbot"]["calls"] == 1
    assert (tmp_path / "dialogues.cache.db").exists()
    before = [path.read_text() for path in (out, default_filtered_path(out)) if path.exists()]
    again = runner.invoke(cli, args)
    assert again.exit_code == 0, again.output
    assert [path.read_text() for path in (out, default_filtered_path(out)) if path.exists()] == before


def finished_lines(out):
    paths = [out, default_filtered_path(out)]
    return sum(path.read_text().count("\n") for path in paths if path.exists())


@pytest.mark.slow
def test_kill_9_mid_run_then_resume(tmp_path):
    """A real process killed hard after its first dialogue; the re-run completes the rest only."""
    import json
    import subprocess
    import sys
    import time

    contexts, out = tmp_path / "contexts.jsonl", tmp_path / "d.jsonl"
    contexts.write_text("".join(c.model_dump_json() + "\n" for c in sample_contexts(3, ["en"], seed=9)))
    command = [sys.executable, "-m", "convoscope", "synth", "dialogues", str(contexts), "--judge", "none",
               "--max-turns", "2", "--max-tokens", "8", "--concurrency", "1", "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not finished_lines(out) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    process.kill()
    process.wait()
    first = [item.id for item in written(out)]
    assert 1 <= len(first) < 3
    finished = subprocess.run(command, capture_output=True, text=True, timeout=PATIENT_S)
    assert finished.returncode == 0, finished.stderr
    ids = [json.loads(line)["id"] for path in (out, default_filtered_path(out)) if path.exists()
           for line in path.read_text().splitlines()]
    assert sorted(ids) == [f"en-000{i}.embedded.embedded" for i in (1, 2, 3)]
    assert f"{first[0]}:" not in finished.stderr  # the finished dialogue was not made again
