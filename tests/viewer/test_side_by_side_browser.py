"""The side-by-side page in real headless Chromium: at 1280 and 390 px wide nothing overflows,
the runs and filters chosen in the page are in its address and come back from it, and text
from reasons and items never runs (checked with the page's CSP switched off, so escaping alone
must hold)."""

from __future__ import annotations

import shutil

import pytest
from viewer_runs import IMAGE, SCRIPT, SVG, make_card, make_two_runs

from convoscope.viewer import create_app, load

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
WIDE, PHONE = 1280, 390


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The viewer over two run archives (no store) and a judge card, served once for the module."""
    from threaded_app import ThreadedApp

    runs = make_two_runs(tmp_path_factory.mktemp("two-runs"))
    card = make_card(tmp_path_factory.mktemp("card"))
    with ThreadedApp(create_app(load(None, archives=[runs.archive_a, runs.archive_b], cards=[card]))) as root:
        yield root


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM,
                                              args=["--headless", "--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


def _overflow(page) -> int:
    """How far the page is wider than the window (0 when nothing overflows horizontally)."""
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


@pytest.mark.parametrize("width", [WIDE, PHONE])
def test_nothing_overflows_sideways(site, browser, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    for address in ("/runs", "/runs/run-a", "/compare?a=run-a&b=run-b", "/?run=run-a", "/cards",
                    "/items/i1"):
        page.goto(site + address)
        page.locator("details").evaluate_all("nodes => nodes.forEach(node => node.open = true)")
        assert _overflow(page) <= 0, f"{address} is wider than {width} px"
    page.goto(site + "/compare?a=run-a&b=run-b")
    # the summary is readable at both widths: each figure beside its name on a phone
    row = page.locator("table.summary tr[data-criterion=overall]")
    assert row.locator("td.p-adjusted").is_visible()
    labels = row.locator("td.p-adjusted").evaluate("node => getComputedStyle(node, '::before').content")
    assert (labels == '"p holm"') == (width == PHONE)
    page.close()


def test_the_chosen_runs_and_filters_are_in_the_address_and_come_back(site, browser):
    page = browser.new_page(viewport={"width": WIDE, "height": 900})
    page.goto(site + "/runs")
    page.select_option("select[name=a]", "run-b")
    page.select_option("select[name=b]", "run-a")
    page.click("form.filters button[type=submit]")
    assert "a=run-b" in page.url and "b=run-a" in page.url
    page.click("a.swap")
    assert "a=run-a" in page.url and "b=run-b" in page.url
    page.select_option("select[name=criterion]", "overall")
    page.select_option("select[name=language]", "en")
    page.check("input[name=flipped]")
    page.select_option("select[name=sort]", "a")
    page.click("form.filters button[type=submit]")
    for part in ("criterion=overall", "language=en", "flipped=1", "sort=a"):
        assert part in page.url
    shown = page.locator("section.pair").evaluate_all(
        "nodes => nodes.map(node => node.dataset.item + '/' + node.dataset.criterion)")
    assert shown == ["i1/overall"]
    again = browser.new_page(viewport={"width": PHONE, "height": 900})
    again.goto(page.url)  # the link alone reproduces the view
    assert again.locator("section.pair").evaluate_all(
        "nodes => nodes.map(node => node.dataset.item + '/' + node.dataset.criterion)") == shown
    assert again.locator("select[name=criterion]").input_value() == "overall"
    assert again.locator("select[name=language]").input_value() == "en"
    assert again.locator("select[name=sort]").input_value() == "a"
    assert again.locator("input[name=flipped]").is_checked()
    again.click("text=clear")
    assert again.locator("section.pair").count() == 12 and "flipped" not in again.url
    page.close()
    again.close()


def test_script_in_reasons_and_items_stays_text(site, browser):
    context = browser.new_context(bypass_csp=True, viewport={"width": WIDE, "height": 900})
    page = context.new_page()
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for address in ("/compare?a=run-a&b=run-b&criterion=overall", "/items/i1", "/?run=run-b"):
        page.goto(site + address)
        page.locator("details").evaluate_all("nodes => nodes.forEach(node => node.open = true)")
        page.wait_for_load_state("load")
        assert page.evaluate("window.__pwned") is None, address
        assert page.locator("img, svg, body script").count() == 0, address
    page.goto(site + "/compare?a=run-a&b=run-b&criterion=overall")
    text = page.inner_text("section.pair[data-item=i1]")
    assert SCRIPT in text and IMAGE in text and SVG in text  # shown as the characters they are
    assert dialogs == []
    context.close()
