"""``convoscope judge`` against an endpoint behind the fault-injecting proxy (answering on its own):
the endpoint flags reach the backend, and a bad body is one item's model_error, not the run's end."""

import json

import pytest
from click.testing import CliRunner
from faultproxy import BAD_BODIES, Fault, FaultProxy

from convoscope.cli._judge import judge_command
from convoscope.store import Store


@pytest.fixture
def proxy():
    with FaultProxy() as running:
        yield running


def items_file(tmp_path, count):
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({"id": str(n), "question": "What did you like?",
                                        "response": f"The staff, visit {n}."}) + "\n" for n in range(count)))
    return path


def judge(tmp_path, proxy, *flags):
    return CliRunner().invoke(judge_command, [
        str(items_file(tmp_path, 3)), "--criterion", "survey/effort", "--no-cache",
        "--judge", f"openai:canned@{proxy.base_url}", "--store", str(tmp_path / "runs.db"),
        "--concurrency", "1", *flags])


def test_a_malformed_body_is_that_items_model_error_and_the_run_goes_on(tmp_path, proxy):
    # Before: "error: Unterminated string ..." (exit 2, as if the input were wrong), or an
    # AttributeError traceback for choices: ["x"]; no verdict after it was made.
    proxy.script(Fault.passthrough(), Fault.passthrough(), Fault.passthrough(),  # the probe
                 *[BAD_BODIES["choices of strings"]] * 2)
    result = judge(tmp_path, proxy, "--max-retries", "1")
    assert not isinstance(result.exception, AttributeError | ValueError), result.output
    assert "error:" not in result.output
    verdicts = Store(str(tmp_path / "runs.db")).verdicts()
    failed = [verdict for verdict in verdicts if verdict.unscored_reason == "model_error"]
    assert len(verdicts) == 3 and len(failed) == 1
    assert proxy.base_url in failed[0].raw and "a choice that is not an object" in failed[0].raw


def test_endpoint_flags_reach_the_backend(tmp_path, proxy):
    proxy.script(Fault.passthrough(), Fault.passthrough(), Fault.passthrough(), Fault.hang(30))
    result = judge(tmp_path, proxy, "--timeout", "0.3", "--max-retries", "0")
    verdicts = Store(str(tmp_path / "runs.db")).verdicts()
    assert any("timeout of 0.3 s" in (verdict.raw or "") for verdict in verdicts), result.output


def test_a_key_over_plain_http_to_a_remote_host_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setenv("REMOTE_KEY", "sk-remote")
    result = CliRunner().invoke(judge_command, [
        str(items_file(tmp_path, 1)), "--criterion", "survey/effort", "--no-cache",
        "--judge", "openai:m@http://judge.example.com/v1", "--api-key-env", "REMOTE_KEY",
        "--store", str(tmp_path / "runs.db")])
    assert result.exit_code == 2
    assert "refusing to send the API key from REMOTE_KEY over plain http" in result.output
    assert "--allow-insecure-key" in result.output


def test_judge_help_lists_every_spec_form():
    # Before: the help named embedded and openai: only; litellm: and Python judges were nowhere.
    shown = " ".join(CliRunner().invoke(judge_command, ["--help"], terminal_width=200).output.split())
    for form in ("'embedded'", "'embedded:NAME'", "'embedded:PATH'", "'openai:MODEL@BASE_URL'",
                 "'anthropic:MODEL[@BASE_URL]'", "'gemini:MODEL'", "'litellm:PROVIDER/MODEL[@API_BASE]'",
                 "'python:MODULE:NAME'", "'python:ENTRY_POINT'"):
        assert form in shown, form
