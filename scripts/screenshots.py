"""Regenerate the screenshots of `convoscope view`'s side-by-side page in docs/ (1280 and 390 px).

    PYTHONPATH=src python scripts/screenshots.py            # writes docs/compare-side-by-side-*.png

The page shows the two real runs of examples/compare/: Gemma 3 270M judging the same 72 ConTurE
turns with prompt A (overall-a.yaml) and prompt B (overall-b.yaml). The example ships the runs'
verdict files (its README says how they were made), so this script first puts each into a run
of a scratch store, with the spec `convoscope judge` records for such a judge (a rubric judge in
completion mode), exports each as a run archive carrying the items and the criteria file it read,
and serves the two archives as `convoscope view a.cvs.zip b.cvs.zip` does. Needs Debian's
chromium and playwright (`pip install playwright`; no browser download).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "compare"
RUNS = (("gemma-a", "overall-a.yaml"), ("gemma-b", "overall-b.yaml"))
WIDTHS = {1280: 1100, 390: 1500}  # width: the height of the shot (the top of the page)


def example_archives(folder: Path) -> list[Path]:
    """The example's two runs as run archives in ``folder`` (through a scratch store)."""
    from convoscope.archive import export_run
    from convoscope.criteria import load_criteria
    from convoscope.items import read_items
    from convoscope.judges import RubricJudge, read_verdicts
    from convoscope.store import Store

    items = {item.id: item for item in read_items(EXAMPLE / "items.jsonl")}
    store_path = folder / "compare.db"
    archives = []
    for name, criteria in RUNS:
        verdicts = read_verdicts(EXAMPLE / f"{name}.jsonl")
        first = verdicts[0]
        run_id = str(first.run_id)
        # The judge that made the run, for its identity and task keys (its model is not loaded).
        judge = RubricJudge(_Named(first.rater.removeprefix("model:").split("[")[0]),  # type: ignore[arg-type]
                            mode="completion")
        wording = {criterion.name: criterion for criterion in load_criteria(EXAMPLE / criteria)}
        spec = {"judge": judge.identity(), "criteria": sorted(wording), "source": "items.jsonl",
                "criteria_file": criteria, "convoscope_version": first.convoscope_version}
        store = Store(store_path)
        try:
            store.start_run(run_id, spec)
            store.add_many(run_id, [(judge.task_key(items[v.item_id], wording[v.criterion]), v)
                                    for v in verdicts])
        finally:
            store.close()
        out = folder / f"{name}.cvs.zip"
        export_run(run_id, store_path, out, items=EXAMPLE / "items.jsonl", criteria_file=EXAMPLE / criteria)
        archives.append(out)
    return archives


class _Named:
    """A model's name only: enough for a judge's identity and the task key of its request, which
    hashes the rendered prompt (so the viewer can check each prompt it renders again)."""

    def __init__(self, name: str):
        self.name = name


def main(out: Path = ROOT / "docs") -> list[Path]:
    out = out.resolve()
    sys.path.insert(0, str(ROOT / "tests"))  # the tests' threaded uvicorn server
    from playwright.sync_api import sync_playwright
    from threaded_app import ThreadedApp

    from convoscope.viewer import create_app, load

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("needs Debian's chromium (apt-get install chromium)")
    written = []
    with tempfile.TemporaryDirectory() as scratch:
        archives = example_archives(Path(scratch))
        os.chdir(scratch)  # the page names each archive as given, as after `cd` and `convoscope view a b`
        data = load(None, archives=[archive.name for archive in archives])
        with ThreadedApp(create_app(data)) as root, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium,
                                                 args=["--headless", "--no-sandbox", "--disable-gpu"])
            address = f"{root}/compare?a={data.runs[0]}&b={data.runs[1]}&flipped=1"
            for width, height in WIDTHS.items():
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(address)
                page.locator("section.pair details.prompt").first.evaluate("node => node.open = true")
                target = out / f"compare-side-by-side-{width}.png"
                page.screenshot(path=str(target))
                written.append(target)
                page.close()
            browser.close()
    return written


if __name__ == "__main__":
    for path in main():
        print(path)
