"""The campaign CLI as a thin shell: init, invite, status, and serve in a real process."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from campaign_helpers import answer_form, get, hidden_field, write_campaign
from click.testing import CliRunner
from patience import PATIENT_S

from convoscope.campaigns import invite, open_campaign
from convoscope.cli._campaign import campaign_group


def test_init_invite_status(tmp_path: Path) -> None:
    runner = CliRunner()
    created = runner.invoke(campaign_group, ["init", str(tmp_path / "new")])
    assert created.exit_code == 0 and (tmp_path / "new" / "campaign.yaml").exists()
    again = runner.invoke(campaign_group, ["init", str(tmp_path / "new")])
    assert again.exit_code == 2 and "alreadyexists" in "".join(again.output.split())
    # the template runs as it stands: its example items fill qualification and one main batch
    campaign = open_campaign(tmp_path / "new")
    assert [batch.kind for batch in campaign.batches] == ["qualification", "main"]
    assert {c.system for b in campaign.batches for ctx in b.contexts for c in ctx.candidates} == {
        "bot-a", "bot-b", "reference"}
    directory = write_campaign(tmp_path / "study")
    invited = runner.invoke(campaign_group, ["invite", str(directory), "--n", "2"])
    assert invited.exit_code == 0 and invited.output.count("http://127.0.0.1:8080/a/") == 2
    open_campaign(directory)  # what `serve` does first: the store is created
    status = runner.invoke(campaign_group, ["status", str(directory)])
    assert status.exit_code == 0, status.output


def test_commands_that_read_never_create_an_empty_store(tmp_path: Path) -> None:
    """Observed: `campaign status` / `report` without --db silently created an empty campaign.db
    and reported 0 answers. Now they say where they looked, and create nothing."""
    directory = write_campaign(tmp_path / "study")
    for command in (["status", str(directory)], ["report", str(directory), "--out", str(tmp_path / "r.html")],
                    ["export", str(directory), "--out", str(tmp_path / "h.jsonl")],
                    ["status", str(directory), "--db", str(tmp_path / "elsewhere.db")]):
        result = CliRunner().invoke(campaign_group, command)
        flat = " ".join(result.output.split())
        assert result.exit_code == 2 and "no store there" in flat and "`campaign serve` creates it" in flat
    assert not (directory / "study.db").exists() and not (tmp_path / "elsewhere.db").exists()
    assert not (tmp_path / "r.html").exists()


def test_missing_web_extra_hint_names_the_extra(tmp_path: Path) -> None:
    """Observed: the hint printed `pip install 'convoscope'` (Rich read `[web]` as markup). As
    without the web extra, in a process of its own where starlette and uvicorn cannot be imported
    (in this process other tests have imported them already: hiding them here could not work, and
    a web app that still imported would serve forever)."""
    hide = (
        "import importlib.abc, sys\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] in ('starlette', 'uvicorn'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "from convoscope.cli import main\n"
        "main()\n")
    study = write_campaign(tmp_path / "study")
    done = subprocess.run([sys.executable, "-c", hide, "campaign", "serve", str(study)], capture_output=True,
                          text=True, timeout=PATIENT_S)
    assert done.returncode == 2 and "pip install 'convoscope[web]'" in done.stderr, done.stderr[-2000:]


def test_bad_spec_is_one_line_error(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "study")
    (directory / "campaign.yaml").write_text("name: x\ncriteria: []\n")
    result = CliRunner().invoke(campaign_group, ["status", str(directory)])
    flat = "".join(result.output.split())  # rich wraps long paths
    assert result.exit_code == 2 and "campaign.yaml:2:" in flat and "(field'criteria')" in flat


@pytest.mark.parametrize("name", sorted(campaign_group.commands))
def test_every_subcommand_has_an_example(name: str) -> None:
    # tests/cli/test_docs.py covers this once the group is registered; until then, here.
    result = CliRunner().invoke(campaign_group, [name, "--help"])
    assert result.exit_code == 0 and "Example" in result.output
    assert f"convoscope campaign {name}" in result.output


def _serve(directory: Path, port: int, *extra: str,
           cwd: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    """`convoscope campaign serve` in its own process; returns it with the dashboard link it printed."""
    process = subprocess.Popen([sys.executable, "-m", "convoscope", "campaign", "serve", str(directory),
                                "--port", str(port), *extra], stdout=subprocess.PIPE, text=True, cwd=cwd)
    lines = []
    while not any("/r/" in line for line in lines) and process.poll() is None and len(lines) < 10:
        lines.append(process.stdout.readline())
    dashboard = re.search(r"http://\S+/r/\S+", "".join(lines))
    assert dashboard, lines
    for _ in range(400):  # generous: the suite may share two cores with other work
        with contextlib.suppress(httpx.TransportError):
            get(f"http://127.0.0.1:{port}/")
            return process, dashboard.group(0)
        time.sleep(0.05)
    raise AssertionError("the server did not start")


def test_serve_survives_a_kill_mid_batch(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "study")
    token = invite(directory, 1)[0].token
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/a/{token}"
    process, dashboard = _serve(directory, port)
    try:
        with httpx.Client(timeout=30) as client:
            for _ in range(2):
                answer_form(client, url, "1")
            open_form = client.get(url).text
    finally:
        process.kill()  # SIGKILL: no shutdown code runs
        process.wait()
    process, again = _serve(directory, port)
    try:
        assert again == dashboard  # the dashboard secret is kept on disk
        client = httpx.Client(timeout=30)
        assert "2 of 6 answered" in client.get(url).text
        data = {name: hidden_field(open_form, name) for name in ("csrf", "task")} | {"answer": "0"}
        assert "3 of 6 answered" in client.post(url, data=data, follow_redirects=True).text
        assert "1 invited · 0 qualified · 3 answers" in client.get(dashboard).text
        client.close()
    finally:
        process.terminate()
        process.wait()
    assert [v.value for v in open_campaign(directory).verdicts()] == [1, 1, 0]


def test_serve_writes_its_store_and_items_into_the_spec(tmp_path: Path) -> None:
    """Observed: after `campaign serve --db study.db`, `status` without --db reported 0 answers (from a
    new empty campaign.db), and --items resolved from the current directory. Now `serve` writes
    what it was given into campaign.yaml, relative to the campaign folder, and every later command
    finds the same store and items from any directory."""
    directory = write_campaign(tmp_path / "study")
    data = tmp_path / "data"
    data.mkdir()
    (directory / "items.jsonl").rename(data / "candidates.jsonl")
    token = invite(directory, 1)[0].token
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Run from the data folder: both paths are given relative to it, as a shell user would.
    process, _ = _serve(Path("../study"), port, "--db", "answers.db", "--items", "candidates.jsonl", cwd=data)
    try:
        with httpx.Client(timeout=30) as client:
            answer_form(client, f"http://127.0.0.1:{port}/a/{token}", "1")
    finally:
        process.terminate()
        process.wait()
    text = (directory / "campaign.yaml").read_text()
    assert 'store: "../data/answers.db"' in text and 'items: "../data/candidates.jsonl"' in text
    status = CliRunner().invoke(campaign_group, ["status", str(directory)])  # from the test's directory
    assert status.exit_code == 0 and "1 answers that count" in status.output, status.output
    assert not (directory / "study.db").exists() and not (directory / "campaign.db").exists()
