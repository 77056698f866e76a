"""The prompts each run sent for a flipped item, side by side (issue 40): rendered again and
checked against the task key, or carried in an archive exported with --prompts."""

from __future__ import annotations

import json
import zipfile

import pytest
from click.testing import CliRunner

import convoscope as cs
from convoscope.cli._app import cli
from convoscope.comparison import to_html, to_markdown
from convoscope.criteria import load_criteria
from convoscope.judges import RubricJudge
from convoscope.models import Generation

WORDING_A = """criteria:
  - name: liking
    question: How much would the user like this reply?
    definition: Rate it as the person chatting would.
    scale: {kind: range, minimum: 0, maximum: 2}
"""
# B's wording carries markup: it must reach a page as text, never as a tag.
WORDING_B = """criteria:
  - name: liking
    question: How much would the user like this reply?
    definition: "Be strict </pre><script>alert('b')</script> with anything off topic."
    scale: {kind: range, minimum: 0, maximum: 2}
"""


class StrictnessFakeModel:
    """A scripted model (tests only; a flip must happen on purpose): 0 when asked to be strict, 2
    otherwise."""

    name = "strictness-fake"

    async def generate(self, request):  # type: ignore[no-untyped-def]
        strict = any("Be strict" in message.content for message in request.messages or ())
        text = json.dumps({"reason": "scripted", "score": 0 if strict else 2})
        return Generation(text=text, model=self.name)

    async def aclose(self) -> None:
        return None


@pytest.fixture(scope="module")
def two_wordings(tmp_path_factory):
    """The same three items judged under wording A and wording B, in one store."""
    folder = tmp_path_factory.mktemp("prompts")
    items_path = folder / "items.jsonl"
    items = [cs.Item(id=f"t{n}", context=(cs.Turn(speaker="user", text=f"question {n}?"),),
                     response=f"answer {n}") for n in range(3)]
    items_path.write_text("".join(item.model_dump_json() + "\n" for item in items), encoding="utf-8")
    files = {}
    for name, text in (("a", WORDING_A), ("b", WORDING_B)):
        files[name] = folder / f"liking-{name}.yaml"
        files[name].write_text(text, encoding="utf-8")
    store = folder / "runs.db"
    judge = RubricJudge(StrictnessFakeModel())
    runs = [cs.judge(items, load_criteria(files[name]), [judge], store=store, cache_path=None).run_id
            for name in ("a", "b")]
    return folder, store, items_path, files, runs


def test_each_flip_shows_the_difference_of_the_prompts_the_two_runs_sent(two_wordings):
    _, store, items_path, files, (first, second) = two_wordings
    comparison = cs.compare(first, second, store=store, items=items_path,
                            criteria=load_criteria(files["a"]), criteria_b=load_criteria(files["b"]))
    row = comparison.criterion("liking")
    assert row.changed == 3 and len(row.flips) == 3
    for flip in row.flips:
        removed = [line for line in flip.prompt_diff if line.startswith("-") and not line.startswith("---")]
        added = [line for line in flip.prompt_diff if line.startswith("+") and not line.startswith("+++")]
        assert any("Rate it as the person chatting would." in line for line in removed), flip.prompt_diff
        assert any("Be strict" in line for line in added), flip.prompt_diff
        assert not any(f"answer {n}" in line for n in range(3) for line in removed + added)  # same item
    page = to_html(comparison)
    assert "&lt;script&gt;alert(" in page and "<script>alert(" not in page
    markdown = to_markdown(comparison)
    assert "```diff" in markdown and "+" in markdown.split("```diff", 1)[1]


def test_a_prompt_is_shown_only_when_it_hashes_to_what_the_run_asked(two_wordings):
    _, store, items_path, files, (first, second) = two_wordings
    wrong = cs.compare(first, second, store=store, items=items_path, criteria=load_criteria(files["a"]))
    flip = wrong.criterion("liking").flips[0]
    assert flip.prompt_diff == ()  # B's prompt, rendered with A's wording, is not what B sent
    assert f"task keys A {flip.task_key_a[:12]}, B {flip.task_key_b[:12]}" in flip.prompt_note
    bare = cs.compare(first, second, store=store).criterion("liking").flips[0]
    assert bare.prompt_diff == () and "--prompts" in bare.prompt_note


def test_archives_exported_with_prompts_show_the_difference_with_no_store(two_wordings, tmp_path):
    folder, store, items_path, files, runs = two_wordings
    archives = []
    for run_id, name in zip(runs, ("a", "b"), strict=True):
        out = tmp_path / f"{name}.cvs.zip"
        result = CliRunner().invoke(cli, ["export-run", run_id, "--store", str(store), "--out", str(out),
                                          "--items", str(items_path), "--criteria-file", str(files[name]),
                                          "--prompts"])
        assert result.exit_code == 0, result.output
        assert "3 rendered prompts carried; 0 verdicts" in result.output
        archives.append(out)
    with zipfile.ZipFile(archives[1]) as opened:
        lines = [json.loads(line) for line in opened.read("prompts.jsonl").decode().splitlines()]
    assert len(lines) == 3 and all("Be strict" in line["prompt"] for line in lines)
    moved = tmp_path / "moved"
    moved.mkdir()
    for archive in archives:  # alone in another folder: no store, no items, no criteria files
        archive.rename(moved / archive.name)
    comparison = cs.compare(str(moved / "a.cvs.zip"), str(moved / "b.cvs.zip"))
    from_store = cs.compare(*runs, store=store, items=items_path, criteria=load_criteria(files["a"]),
                            criteria_b=load_criteria(files["b"]))
    assert [f.prompt_diff for f in comparison.criterion("liking").flips] == [
        f.prompt_diff for f in from_store.criterion("liking").flips
    ]
    result = CliRunner().invoke(cli, ["compare", str(moved / "a.cvs.zip"), str(moved / "b.cvs.zip"),
                                      "--out", str(tmp_path / "x.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "x.html").read_text(encoding="utf-8")
    assert "prompt-diff" in page and "&lt;script&gt;" in page and "<script>alert(" not in page


def test_prompts_are_refused_without_the_files_to_render_them_from(two_wordings, tmp_path):
    _, store, _, _, (first, _) = two_wordings
    result = CliRunner().invoke(cli, ["export-run", first, "--store", str(store),
                                      "--out", str(tmp_path / "x.cvs.zip"), "--prompts"])
    assert result.exit_code == 2 and "--items and --criteria-file" in result.output
