"""Issue 17 on the real embedded models: the README's offline synth example runs end to end and
gives at least one dialogue per language; the next-token judge is calibrated and its feedback
names what failed."""

from __future__ import annotations

import re
import shlex
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from synth_scripted import agents, role_of

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import read_items
from convoscope.synth import (
    JUDGE_CHECKS,
    SynthSettings,
    calibrate_judge,
    opening_turn,
    read_contexts,
    sample_contexts,
)

pytest.importorskip("llama_cpp")
README = Path(__file__).parents[2] / "README.md"


def readme_synth_example() -> list[list[str]]:
    """The commands of the first code block of the README's "Simulated dialogues" section."""
    section = README.read_text(encoding="utf-8").split("## Simulated dialogues", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL).group(1)
    return [shlex.split(line)[1:] for line in block.replace("\\\n", " ").splitlines() if line.strip()]


@pytest.mark.slow
def test_the_readme_synth_example_gives_a_dialogue_in_every_language(tmp_path, monkeypatch):
    _register()
    monkeypatch.chdir(tmp_path)
    commands = readme_synth_example()
    assert [command[:2] for command in commands] == [["synth", "contexts"], ["synth", "dialogues"],
                                                     ["synth", "stats"]]
    outputs = [CliRunner().invoke(cli, command) for command in commands]
    for command, result in zip(commands, outputs, strict=True):
        assert result.exit_code == 0, f"{command}: {result.output}"
    languages = {context.language for context in read_contexts("contexts.jsonl")}
    kept = read_items("dialogues.jsonl")
    assert {item.language for item in kept} == languages
    assert all(len(item.context) >= 2 for item in kept)
    # the run says plainly what the weak judge could and could not check
    generation = " ".join(outputs[1].output.split())
    assert "the judge could check" in generation and "could not check" in generation
    for language in languages:
        assert f"| {language} |" in outputs[2].output
    # the response cache was filled (an empty cache used to be dropped as falsy), so a re-run
    # finds every dialogue done and makes no call
    with sqlite3.connect(tmp_path / "dialogues.cache.db") as db:
        assert db.execute("select count(*) from responses").fetchone()[0] > 0
    before = Path("dialogues.jsonl").read_text()
    again = CliRunner().invoke(cli, commands[1])
    assert again.exit_code == 0 and Path("dialogues.jsonl").read_text() == before


@pytest.fixture(scope="module")
def embedded_judge():
    from convoscope.models import EmbeddedModel

    return EmbeddedModel(n_threads=2)


@pytest.mark.slow
async def test_the_embedded_judge_is_calibrated_and_says_what_it_can_check(embedded_judge):
    calibration, usage = await calibrate_judge(embedded_judge)
    assert set(calibration.checks) == set(JUDGE_CHECKS) and usage.calls >= 6
    for check in calibration.checks.values():
        if check.threshold is None:
            assert min(check.good) <= max(check.bad)
        else:
            assert max(check.bad) < check.threshold < min(check.good)
    note = calibration.describe()
    assert note.startswith("the judge could check")
    assert all(name in note for name in JUDGE_CHECKS)


@pytest.mark.slow
async def test_completion_judge_feedback_names_the_failed_check_and_its_probability(embedded_judge):
    """Observed: the feedback was always 'rejected by the judge (completion mode gives no reason)'."""
    context = sample_contexts(1, ["en"], seed=3)[0]
    user = agents(user_lines=lambda r: "Any tips for keeping basil alive on a windowsill?")
    settings = SynthSettings(judge_mode="completion", judge_thresholds={"natural": 0.999},
                             first_turn_attempts=2)
    log, usage, error = await opening_turn(context, user=user, judge=embedded_judge, settings=settings,
                                           key="k")
    assert error is None and not log.accepted
    first = log.attempts[0]
    assert first.checked_by == "judge" and set(first.scores) == {"natural"}
    assert re.search(r"\(natural: P\(yes\) 0\.\d\d, needs 1\.00\)", first.feedback)
    assert "completion mode gives no reason" not in first.feedback
    retry = [r for r in user.requests if role_of(r) == "user-first"][1].messages[1].content
    assert first.feedback in retry  # the next try is told what failed
    assert usage.roles["judge"].calls == 2  # one question per check asked, per attempt
