"""The viewer's runs, one run and two runs side by side, from a store and from run archives."""

from __future__ import annotations

import re
import shutil
from html import unescape

import pytest
from starlette.testclient import TestClient
from viewer_runs import FLIPPED, IMAGE, PLAN, QUESTION_A, QUESTION_B, SCRIPT, SVG, make_two_runs, task_key

import convoscope as cs
from convoscope.viewer import create_app, load

BOTH = {"a": "run-a", "b": "run-b"}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    return make_two_runs(tmp_path_factory.mktemp("two-runs"))


def _client(*args, **kwargs):
    return TestClient(create_app(load(*args, **kwargs)))


def _pairs(page: str) -> list[tuple[str, str]]:
    return re.findall(r'<section class="pair[^"]*" data-item="([^"]+)" data-criterion="([^"]+)"', page)


def _section(page: str, item: str, criterion: str) -> str:
    """One item's section of the side-by-side page, unescaped."""
    found = page[page.index(f'data-item="{item}" data-criterion="{criterion}"'):]
    return unescape(found[:found.index("</section>")])


def _prompts(page: str) -> list[str]:
    return re.findall(r'<details class="prompt">.*?</details>', page, re.S)


def test_the_runs_page_lists_a_stores_runs_and_offers_two_side_by_side(two_runs):
    page = _client(two_runs.store).get("/runs")
    assert page.status_code == 200
    assert 'href="/runs/run-a"' in page.text and 'href="/runs/run-b"' in page.text
    assert 'action="/compare"' in page.text and '<option value="run-b" selected>' in page.text
    one = _client(two_runs.store).get("/runs/run-a").text
    assert "openai:judge-x" in one and '"wording": "A"' in unescape(one)
    assert 'href="/compare?a=run-a&amp;b=run-b"' in one


def test_two_archives_alone_are_compared_with_the_figures_of_compare(two_runs, tmp_path):
    # Only the two archives, no store beside them: the summary is cs.compare's value on them.
    for archive in (two_runs.archive_a, two_runs.archive_b):
        shutil.copy(archive, tmp_path / archive.name)
    archives = [tmp_path / "a.cvs.zip", tmp_path / "b.cvs.zip"]
    page = _client(None, archives=archives).get("/compare", params=BOTH).text
    expected = cs.compare(*archives)
    assert expected.correction == "holm"
    for row in expected.criteria:
        cells = re.search(rf'<tr data-criterion="{row.criterion}">(.*?)</tr>', page, re.S).group(1)
        if row.change is not None:
            assert f"{row.change:+.3f} [{row.change_low:+.3f}, {row.change_high:+.3f}]" in cells
        assert row.test in cells
        assert f">{row.pvalue_adjusted:.3g}<" in cells
        assert f"{row.agreement_name} {row.agreement:.3f}" in unescape(cells)
        assert f"{row.changed} ({row.changed_share:.0%})" in cells
    assert "p holm" in page


def test_the_store_and_its_archives_give_the_same_page(two_runs):
    from_store = _client(two_runs.store, items=[two_runs.items], criteria_files=[two_runs.criteria_a]).get(
        "/compare", params=BOTH).text
    from_archives = _client(None, archives=[two_runs.archive_a, two_runs.archive_b]).get("/compare",
                                                                                          params=BOTH)
    summary = re.compile(r'<table class="summary cards">.*?</table>', re.S)
    assert summary.search(from_store).group(0) == summary.search(from_archives.text).group(0)
    assert _pairs(from_store) == _pairs(from_archives.text)
    # A store keeps no criteria file per run: run B's prompts, rendered from run A's file, do not
    # hash to what B asked, so the page does not claim they were the same; given both files, every
    # prompt checks out and the page shows what the archives show.
    assert "prompt difference: none" not in _section(from_store, "i2", "overall")
    assert "prompts or judges differ" in _section(from_store, "i2", "overall")
    files = [two_runs.criteria_a, two_runs.criteria_b]
    both = _client(two_runs.store, items=[two_runs.items], criteria_files=files).get("/compare", params=BOTH)
    assert _prompts(both.text) == _prompts(from_archives.text)


def test_a_store_and_its_own_archive_are_one_run_with_the_archives_criteria(two_runs):
    data = load(two_runs.store, archives=[two_runs.archive_a, two_runs.archive_b])
    assert data.runs == ["run-a", "run-b"] and len(data.rows) == 24
    assert data.run_info["run-a"].source == str(two_runs.store)
    assert QUESTION_B in data.run_info["run-b"].criteria_text


def test_a_runs_own_verdict_file_beside_its_store_is_the_same_run(two_runs, tmp_path):
    from convoscope.store import Store

    store = Store(two_runs.store, create=False)
    out = tmp_path / "run-b.jsonl"
    out.write_text("".join(v.model_dump_json() + "\n" for v in store.verdicts("run-b")))
    store.close()
    # Before: "run run-b is in ... with different specs" (the file records none)
    for data in (load(two_runs.store, verdict_files=[out]), load(None, verdict_files=[out],
                                                                   archives=[two_runs.archive_b])):
        assert "run-b" in data.runs and data.run_info["run-b"].spec["wording"] == "B"
        assert sum(1 for row in data.rows if row.run_id == "run-b") == 12


def test_every_item_shows_both_verdicts_and_both_reasons(two_runs):
    page = _client(None, archives=[two_runs.archive_a, two_runs.archive_b]).get("/compare", params=BOTH).text
    assert len(_pairs(page)) == 2 * len(PLAN)
    first = page[page.index('data-item="i1" data-criterion="overall"'):]
    first = first[:first.index("</section>")]
    assert "too long &lt;script&gt;" in first and "rambles &lt;img" in first
    assert re.search(r"side-a.*?<strong>4</strong>.*?side-b.*?<strong>2</strong>", first, re.S)
    unscored = page[page.index('data-item="i5" data-criterion="overall"'):]
    assert "unscored: parse_failure" in unscored[:unscored.index("</section>")]


def test_changed_only_keeps_exactly_the_flips_largest_first(two_runs):
    client = _client(None, archives=[two_runs.archive_a, two_runs.archive_b])
    flips = _pairs(client.get("/compare", params={**BOTH, "flipped": "1"}).text)
    assert set(flips) == FLIPPED and len(flips) == len(FLIPPED)
    assert flips[0] == ("i1", "overall")  # a change of 2 before the changes of 1
    only = _pairs(client.get("/compare", params={**BOTH, "flipped": "1", "criterion": "polite"}).text)
    assert only == [("i2", "polite"), ("i6", "polite")]


def test_system_and_language_filter_and_values_sort(two_runs):
    client = _client(None, archives=[two_runs.archive_a, two_runs.archive_b])
    bot_b_ko = _pairs(client.get("/compare", params={**BOTH, "system": "bot-b", "language": "ko"}).text)
    assert sorted(bot_b_ko) == [("i6", "overall"), ("i6", "polite")]
    by_a = _pairs(client.get("/compare", params={**BOTH, "criterion": "overall", "sort": "a"}).text)
    assert [item for item, _ in by_a] == ["i1", "i2", "i6", "i3", "i4", "i5"]  # 4, 3, 3, 2, 1, unscored
    assert client.get("/compare", params={**BOTH, "sort": "sideways"}).status_code == 400


def test_the_prompt_difference_is_the_criterion_wording_each_run_read(two_runs):
    page = _client(None, archives=[two_runs.archive_a, two_runs.archive_b]).get(
        "/compare", params={**BOTH, "criterion": "overall"}).text
    section = page[page.index('data-item="i2"'):]
    section = unescape(section[:section.index("</section>")])
    assert re.search(rf'class="del">-.*{re.escape(QUESTION_A)}', section)
    assert re.search(rf'class="add">\+.*{re.escape(QUESTION_B)}', section)
    # The runs' specs differ in what they recorded, and the archives' criteria files in the wording.
    assert "What the runs asked differently" in page and '- "wording": "A"' in unescape(page)


def test_a_prompt_rendered_from_a_criteria_file_edited_after_the_run_is_not_shown(two_runs, tmp_path):
    # Run A from the store, which keeps no criteria file; view is given A's file as it reads after
    # an edit. The prompt rendered from it is not what run A sent (it does not hash to A's task
    # key): the page must not show it as A's prompt, and must say why, as `compare` does.
    edited = tmp_path / "criteria-a.yaml"
    wording = two_runs.criteria_a.read_text(encoding="utf-8")
    edited.write_text(wording.replace(QUESTION_A, "EDITED: any good?"), encoding="utf-8")
    page = _client(two_runs.store, archives=[two_runs.archive_b], criteria_files=[edited]).get(
        "/compare", params={**BOTH, "criterion": "overall"}).text
    section = _section(page, "i2", "overall")
    assert "EDITED" not in section and "prompt difference: unknown" in section
    key_a = task_key("i2", "overall", two_runs.criteria_a, two_runs.items)
    key_b = task_key("i2", "overall", two_runs.criteria_b, two_runs.items)
    assert f"prompts or judges differ (task keys A {key_a[:12]}, B {key_b[:12]})" in section
    assert "A: no prompt rendered from the items and criteria at hand hashes to its task key" in section
    # With the file as the run read it, A's prompt checks out and the difference is shown.
    page = _client(two_runs.store, archives=[two_runs.archive_b], criteria_files=[two_runs.criteria_a]).get(
        "/compare", params={**BOTH, "criterion": "overall"}).text
    section = _section(page, "i2", "overall")
    assert re.search(rf"-.*{re.escape(QUESTION_A)}", section)
    assert re.search(rf"\+.*{re.escape(QUESTION_B)}", section)


def test_a_run_against_itself_sent_the_same_prompts_and_changed_nothing(two_runs):
    client = _client(None, archives=[two_runs.archive_a])
    page = client.get("/compare", params={"a": "run-a", "b": "run-a"}).text
    assert "prompt difference: none" in page and "0 changed" in page
    assert "What the runs asked differently" not in page


def test_a_judge_without_a_rubric_prompt_is_said_so(two_runs, tmp_path):
    def length(item, criterion):
        return min(1, len(item.response or "") % 2) if criterion.name == "polite" else 2

    items = cs.read_items(two_runs.items)
    criteria = cs.select_criteria(files=[two_runs.criteria_a])
    store = tmp_path / "py.db"
    first, second = (cs.judge(items, criteria, [cs.python_judge(name="length", version=version)(length)],
                              store=store) for version in ("1", "2"))
    client = _client(store, items=[two_runs.items])
    page = client.get("/compare", params={"a": first.run_id, "b": second.run_id})
    assert page.status_code == 200 and "a python judge sends no rubric prompt" in page.text


def test_runs_with_no_criterion_in_common_say_why_and_still_list_their_items(two_runs, tmp_path):
    from convoscope.store import Store

    store = Store(tmp_path / "two.db")
    for run_id, criterion in (("x", "overall"), ("y", "polite")):
        store.start_run(run_id, {})
        verdict = cs.Verdict(item_id="i1", criterion=criterion, rater="m", value=1)
        store.add_many(run_id, [("k" + run_id, verdict)])
    store.close()
    page = _client(tmp_path / "two.db").get("/compare", params={"a": "x", "b": "y"})
    assert page.status_code == 200
    assert "No comparison: x and y judged no criterion in common" in page.text
    assert len(_pairs(page.text)) == 2


def test_untrusted_text_is_escaped_on_the_side_by_side_page(two_runs):
    page = _client(None, archives=[two_runs.archive_a, two_runs.archive_b]).get("/compare", params=BOTH).text
    for payload in (SCRIPT, IMAGE, SVG):
        assert payload not in page
    assert "&lt;svg onload=" in page


def test_the_run_pages_are_read_only_and_name_what_is_wrong(two_runs):
    client = _client(two_runs.store)
    assert client.post("/compare", params=BOTH).status_code == 405
    assert client.get("/compare", params={"a": "run-a"}).status_code == 400
    missing = client.get("/compare", params={"a": "run-a", "b": "nope"})
    assert missing.status_code == 404 and "no run 'nope'" in missing.text
    assert client.get("/runs/nope").status_code == 404
    assert client.get("/compare", params={**BOTH, "page": "x"}).status_code == 400


def test_view_opens_archives_and_one_store_from_the_command_line(two_runs, monkeypatch):
    from click.testing import CliRunner

    import convoscope.viewer
    from convoscope.cli import cli
    from convoscope.cli._app import _register

    _register()
    served = []
    monkeypatch.setattr(convoscope.viewer, "serve", lambda data, **_: served.append(data))
    result = CliRunner().invoke(cli, ["view", str(two_runs.archive_a), str(two_runs.archive_b)],
                                env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert served[0].runs == ["run-a", "run-b"] and "/compare?a=run-a&b=run-b" in result.output
    both = CliRunner().invoke(cli, ["view", str(two_runs.store), str(two_runs.store) + "2"])
    assert both.exit_code == 2 and "one store at a time" in both.output


def test_a_damaged_archive_is_refused_with_one_line_naming_it(two_runs, tmp_path):
    from click.testing import CliRunner

    from convoscope.cli import cli
    from convoscope.cli._app import _register

    _register()
    damaged = tmp_path / "damaged.cvs.zip"
    damaged.write_bytes(two_runs.archive_b.read_bytes()[:-200])
    result = CliRunner().invoke(cli, ["view", str(two_runs.archive_a), str(damaged)], env={"COLUMNS": "300"})
    assert result.exit_code == 2
    assert f"{damaged}: not a run archive" in result.output and "Traceback" not in result.output


def test_the_screenshot_script_archives_the_examples_runs_as_they_are(tmp_path):
    """scripts/screenshots.py shows examples/compare/'s two Gemma runs from archives it makes:
    the archives must hold the same runs as the shipped verdict files."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("screenshots", root / "scripts" / "screenshots.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    archives = script.example_archives(tmp_path)
    example = root / "examples" / "compare"
    shipped = cs.compare(example / "gemma-a.jsonl", example / "gemma-b.jsonl")
    archived = cs.compare(*archives)
    assert archived.to_pandas().equals(shipped.to_pandas())
    client = _client(None, archives=archives)
    page = client.get("/compare", params={"a": archived.label_a, "b": archived.label_b, "flipped": "1"}).text
    assert len(_pairs(page)) == shipped.criteria[0].changed
    # 72 items are two pages; the next page keeps the runs and the sort
    runs = {"a": archived.label_a, "b": archived.label_b}
    listed = client.get("/compare", params={**runs, "sort": "item"}).text
    assert len(_pairs(listed)) == 50 and "Page 1 of 2" in listed
    following = f"/compare?a={archived.label_a}&amp;b={archived.label_b}&amp;sort=item&amp;page=2"
    assert f'href="{following}"' in listed
    rest = client.get(unescape(following)).text
    in_order = [item.id for item in cs.read_items(example / "items.jsonl")]
    assert [item for item, _ in _pairs(rest)] == in_order[50:]
    assert "How much would the user like this chatbot turn?" in unescape(page)  # prompt A's wording, diffed
    # Each run's prompt, rendered again from its archive, hashes to the task key the judge gave it.
    assert "prompt difference: unknown" not in page and "prompt difference (" in page


def test_two_verdict_files_of_judge_runs_are_runs_side_by_side_and_peoples_are_not():
    """`judge --out` files (one run id, one rater) can be chosen as A and B; people's are listed only."""
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "compare"
    files = [example / "gemma-a.jsonl", example / "gemma-b.jsonl", example / "human.jsonl"]
    data = load(None, verdict_files=files, items=[example / "items.jsonl"])
    assert data.runs == ["363d241fb49b9c0a", "89f54f42389927b9"] and len(data.rows) == 3 * 72
    expected = cs.compare(*files[:2])
    page = TestClient(create_app(data)).get("/compare", params={"a": data.runs[0], "b": data.runs[1]}).text
    row = expected.criteria[0]
    assert f"{row.change:+.3f} [{row.change_low:+.3f}, {row.change_high:+.3f}]" in page
    assert "prompt difference: unknown" in page and "the run recorded no judge" in page
