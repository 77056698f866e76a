"""The report in real headless Chromium: the heatmap renders with visible cells, a click on a
cell reaches its flagged dialogues, and nothing is fetched from the network."""

import shutil
from pathlib import Path

import pytest

from convoscope.reports import write_report

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium")


@pytest.fixture
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def report_page(browser, all_verdicts, tmp_path):
    out = tmp_path / "report.html"
    write_report([all_verdicts], out)
    page = browser.new_page(viewport={"width": 1200, "height": 700})
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(out.as_uri())
    yield page
    assert all(url.startswith("file://") for url in requests), requests  # self-contained
    page.close()


def test_heatmap_cells_are_visible_and_coloured(report_page):
    cells = report_page.locator("table.heatmap-judges td.heat")
    assert cells.count() == 6  # 3 chatbot x language rows, 2 issues
    for index in range(cells.count()):
        assert cells.nth(index).is_visible()
    hot = report_page.locator("table.heatmap-judges td.heat[data-issue='repetitive'] a")
    assert hot.count() == 1 and hot.inner_text().startswith("100%")
    colour = hot.locator("xpath=..").evaluate("cell => getComputedStyle(cell).backgroundColor")
    blank = report_page.locator("table.heatmap-judges td.heat").first.evaluate(
        "cell => getComputedStyle(cell).backgroundColor")
    assert colour != blank  # a high rate is drawn darker than a zero


def test_a_click_on_a_cell_reaches_its_examples(report_page):
    listing_id = report_page.locator("table.heatmap-judges td.heat[data-issue='repetitive'] a") \
        .get_attribute("href").removeprefix("#")
    listing = report_page.locator(f"[id='{listing_id}']")
    assert not _in_viewport(listing)  # the examples are further down the page
    report_page.locator("table.heatmap-judges td.heat[data-issue='repetitive'] a").click()
    report_page.wait_for_function(f"location.hash === '#{listing_id}'")
    assert _in_viewport(listing)
    text = listing.inner_text()
    assert "d3" in text and "d4" in text and "<b>bot-b</b> says the same thing twice" in text
    highlighted = listing.evaluate("el => getComputedStyle(el).borderLeftColor")
    assert highlighted == "rgb(204, 51, 51)"  # the :target style marks what was clicked


def test_other_sections_render(report_page):
    assert report_page.locator("table.candidates tbody tr").count() == 4
    assert report_page.locator("table.breakdown .bar span").count() == 3
    assert report_page.locator("table.kpis tbody tr").count() == 4
    assert report_page.locator("#kpis").is_visible()


def _in_viewport(locator) -> bool:
    return locator.evaluate("el => { const r = el.getBoundingClientRect();"
                            " return r.top >= 0 && r.top < window.innerHeight; }")
