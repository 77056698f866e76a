"""The verdict viewer: filters, items side by side, escaping, read-only; and in real Chromium."""

from __future__ import annotations

import re
import shutil

import pytest
from starlette.testclient import TestClient

from convoscope import Item, Turn, Verdict
from convoscope.items import write_jsonl
from convoscope.store import Store
from convoscope.viewer import create_app, load

EVIL = "<script>alert('x')</script>"


def _verdict(item, rater, value, **fields):
    return Verdict(item_id=item, criterion=fields.pop("criterion", "overall"), rater=rater, value=value,
                   system=fields.pop("system", "bot-a"), language="en", **fields)


@pytest.fixture
def viewer_files(tmp_path):
    store = Store(tmp_path / "verdicts.db")
    store.start_run("run-1", {"judge": "test"})
    rows = [
        _verdict("d1", "model:judge-a", 4, reason=f"fine {EVIL}"),
        _verdict("d1", "model:judge-b", 2, reason="too short"),
        _verdict("d2", "model:judge-a", None, unscored_reason="parse_failure", raw="no score",
                 system="bot-b"),
        _verdict("d2", "model:judge-a", 1, criterion="relevance", system="bot-b"),
    ]
    # Completed in another order than the items file's: d0 (first in the file) was judged last.
    rows += [_verdict("d0", "model:judge-a", 1, criterion="repetitive", system="bot-c"),
             _verdict("d1", "model:judge-a", 0, criterion="repetitive")]
    store.add_many("run-1", [(f"k{n}", v) for n, v in enumerate(rows)])
    store.close()
    people = tmp_path / "people.jsonl"
    people.write_text(_verdict("d1", "human:ann1", 3, reason="okay").model_dump_json() + "\n")
    items = tmp_path / "items.jsonl"
    write_jsonl([Item(id="d0", system="bot-c", question="How was your trip?", response="good good good good"),
                 Item(id="d1", system="bot-a", context=(Turn(speaker="user", text=f"hi {EVIL}"),),
                      response="hello there"),
                 Item(id="d2", system="bot-b", context=(Turn(speaker="user", text="hey"),), response="what")],
                items)
    return tmp_path / "verdicts.db", people, items


def _client(viewer_files):
    store, people, items = viewer_files
    return TestClient(create_app(load(store, items=[items], verdict_files=[people])))


def test_index_lists_items_and_filters_by_reason(viewer_files):
    client = _client(viewer_files)
    page = client.get("/")
    assert page.status_code == 200
    assert "d1" in page.text and "d2" in page.text
    filtered = client.get("/", params={"reason": "parse_failure"})
    assert "/items/d2" in filtered.text and "/items/d1" not in filtered.text
    by_system = client.get("/", params={"system": "bot-a", "rater": "human:ann1"})
    assert "1 item(s) match" in by_system.text


def test_items_come_in_input_order_with_their_question_and_values_with_their_labels(viewer_files):
    # Before: items in completion order (d1, d2, d0), no question on the list, binary values bare.
    page = _client(viewer_files).get("/").text
    assert page.index("/items/d0") < page.index("/items/d1") < page.index("/items/d2")
    assert "How was your trip?" in page
    # "repetitive" is a built-in binary criterion (dialogue-issues): 1 present, 0 absent.
    assert '1 · <span class="label">present</span>' in page
    assert '0 · <span class="label">absent</span>' in page
    assert re.search(r'<option value="1">1 · [^<]*present', page)  # the value filter names it too


def test_your_own_criteria_name_their_values(viewer_files, tmp_path):
    store, people, items = viewer_files
    mine = tmp_path / "mine.yaml"
    mine.write_text("name: overall\nquestion: How good?\ndefinition: Overall quality.\n"
                    "scale: {kind: range, minimum: 1, maximum: 4}\nlevels:\n"
                    + "".join(f"  - {{value: {v}, name: L{v}, definition: level {v}}}\n"
                              for v in range(1, 5)))
    client = TestClient(create_app(load(store, items=[items], verdict_files=[people], criteria_files=[mine])))
    assert '4 · <span class="label">L4</span>' in client.get("/items/d1").text


def test_the_filters_stay_in_the_address_through_an_item_and_back(viewer_files):
    client = _client(viewer_files)
    listing = client.get("/", params={"criterion": "repetitive", "system": "bot-a"}).text
    assert 'href="/items/d1?criterion=repetitive&amp;system=bot-a"' in listing
    item = client.get("/items/d1", params={"criterion": "repetitive", "system": "bot-a"}).text
    assert 'href="/?criterion=repetitive&amp;system=bot-a"' in item and "the filtered list" in item


def test_an_item_shows_its_context_and_every_verdict_side_by_side(viewer_files):
    page = _client(viewer_files).get("/items/d1")
    assert page.status_code == 200
    for text in ("model:judge-a", "model:judge-b", "human:ann1", "too short", "okay", "hello there"):
        assert text in page.text
    assert page.text.index("model:judge-b") < page.text.index("human:ann1")  # people after judges


def test_text_from_strangers_is_escaped(viewer_files):
    page = _client(viewer_files).get("/items/d1")
    assert EVIL not in page.text
    assert "&lt;script&gt;" in page.text
    assert "script-src" in page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


def test_the_viewer_is_read_only_and_unknown_items_are_404(viewer_files):
    client = _client(viewer_files)
    assert client.post("/").status_code == 405
    assert client.delete("/items/d1").status_code == 405
    assert client.get("/items/nope").status_code == 404
    assert client.get("/", params={"page": "x"}).status_code == 400


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_the_viewer_in_chromium_filters_and_opens_an_item(viewer_files):
    sync_api = pytest.importorskip("playwright.sync_api")
    from threaded_app import ThreadedApp

    store, people, items = viewer_files
    app = create_app(load(store, items=[items], verdict_files=[people]))
    with ThreadedApp(app) as root:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                                 args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            dialogs = []
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.goto(f"{root}/")
            page.select_option("select[name=reason]", "parse_failure")
            page.click("button[type=submit]")
            assert page.locator("section.item").count() == 1 and "reason=parse_failure" in page.url
            page.click("text=d2")
            assert page.url.endswith("/items/d2?reason=parse_failure")
            assert "unscored: parse_failure" in page.inner_text("body")
            page.click("a.back")  # back to the same filtered list, its filter still chosen
            assert page.url.endswith("/?reason=parse_failure") and page.locator("section.item").count() == 1
            assert page.locator("select[name=reason]").input_value() == "parse_failure"
            page.goto(f"{root}/")
            ids = page.locator("section.item h2 a").all_inner_texts()
            assert ids == ["d0", "d1", "d2"] and "1 · present" in page.inner_text("body")
            page.goto(f"{root}/items/d1")
            assert page.locator("table[data-criterion=overall] tr.human").count() == 1
            assert EVIL in page.inner_text("body")  # shown as text, not run
            assert dialogs == []
            browser.close()


def test_view_without_a_store_or_files_is_a_usage_error(tmp_path):
    from click.testing import CliRunner

    from convoscope.cli import cli
    from convoscope.cli._app import _register

    _register()
    result = CliRunner().invoke(cli, ["view", str(tmp_path / "missing.db")], env={"COLUMNS": "300"})
    assert result.exit_code == 2
    assert f"{tmp_path / 'missing.db'}: no store there" in result.output
    assert not (tmp_path / "missing.db").exists()
    assert CliRunner().invoke(cli, ["view"]).exit_code == 2


def test_a_pair_shows_both_responses_beside_judges_and_people(tmp_path):
    """Pairwise verdicts name pair items no items file holds; the viewer builds them from the items."""
    items = tmp_path / "items.jsonl"
    context = (Turn(speaker="user", text="Recommend a film?"),)
    write_jsonl([Item(id=f"c1-{system}", system=system, context=context, response=text,
                      meta={"context_id": "c1"})
                 for system, text in (("bot-a", "Try 'Past Lives'."), ("bot-b", f"no {EVIL}"))], items)
    verdicts = tmp_path / "pairs.jsonl"
    said = (("model:judge-a", "bot-a"), ("human:ann1", "tie"))
    rows = [_verdict("c1:bot-a~bot-b", rater, value, criterion="pairwise:appropriateness",
                     system="bot-a~bot-b") for rater, value in said]
    verdicts.write_text("".join(row.model_dump_json() + "\n" for row in rows))
    client = TestClient(create_app(load(None, items=[items], verdict_files=[verdicts])))
    page = client.get("/items/c1:bot-a~bot-b")
    assert page.status_code == 200
    assert "Try &#39;Past Lives&#39;." in page.text and "no &lt;script&gt;" in page.text
    assert EVIL not in page.text
    assert page.text.count('class="turn response pair-side"') == 2
    assert "model:judge-a" in page.text and "human:ann1" in page.text
    assert "not loaded" not in page.text
