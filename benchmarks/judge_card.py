"""The judge card's worked example on public data: USR Topical-Chat, "overall" (1-5, three experts).

Three judges are carded side by side on a seeded sample of whole contexts (every system's response
to each, so the system level and the pairwise position test have something to compare):

* ``embedded`` — SmolLM2-135M by llama.cpp, the model the project ships (asked ``--repeats``
  times, so the card reports its self-consistency);
* ``baseline:length`` — the response's length in words, carded like a judge;
* ``python:noisy-experts`` — a scripted judge of *known* quality: the experts' own mean plus seeded
  Gaussian noise sized for a correlation of about ``--scripted-r`` (it sees the answers, so it is a
  yardstick, not a method; on the card's probes, which people never rated, it says 3).

A card that works separates them: the scripted judge usable for scoring items, length and the
embedded model not. The data set is research-only and is read from ``--data`` at run time; the
result file holds statistics only. Writes ``benchmarks/results/judge_card.md`` (and, with
Chromium, the phone-width screenshot ``docs/judge-card.png``).

    python benchmarks/judge_card.py --data ../shared/data --contexts 12 --repeats 2
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from metaeval_benchmarks import Plan, judge_criterion  # noqa: E402

import convoscope as cs  # noqa: E402
from convoscope.datasets import load_benchmark  # noqa: E402
from convoscope.judges import python_judge  # noqa: E402

ROOT = Path(__file__).parents[1]
PLAN = Plan("usr-topicalchat", "overall", (1, 5))


def scripted_judge(human: list, r: float, seed: int):
    """The experts' mean plus noise with sd chosen so that corr(judge, mean) is about ``r``."""
    people: dict[str, list[float]] = {}
    for verdict in human:
        people.setdefault(verdict.item_id, []).append(float(verdict.value))
    means = {item: float(np.mean(values)) for item, values in people.items()}
    spread = float(np.std(list(means.values())))
    noise_sd = spread * math.sqrt(1 / r**2 - 1)

    @python_judge(name="noisy-experts", version=f"{r}-{seed}")
    def noisy_experts(item, criterion):
        if item.id not in means:
            return 3
        noise = random.Random(f"{seed}:{item.id}").gauss(0, noise_sd)
        return float(min(5.0, max(1.0, means[item.id] + noise)))

    return noisy_experts


def sample(data: str, contexts: int, seed: int) -> tuple[list, list]:
    benchmark = load_benchmark(PLAN.benchmark, data, reference_free=True)
    numbers = sorted({item.id.split(":")[1] for item in benchmark.items}, key=int)
    chosen = set(random.Random(seed).sample(numbers, contexts))
    items = [item for item in benchmark.items if item.id.split(":")[1] in chosen]
    ids = {item.id for item in items}
    human = [v for v in benchmark.human if v.criterion == PLAN.criterion and v.item_id in ids
             and v.value is not None]
    return items, human, judge_criterion(benchmark, PLAN)


def screenshot(html: str, path: Path) -> bool:
    import shutil

    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return False
    if chromium is None:
        return False
    with tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "card.html"
        page_path.write_text(html, encoding="utf-8")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 390, "height": 1400})
            page.goto(page_path.as_uri())
            page.screenshot(path=str(path))
            browser.close()
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--contexts", type=int, default=12, help="USR contexts (6 responses each).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--scripted-r", type=float, default=0.6)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--store", help="SQLite store (resumable); default: a temporary folder.")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "judge_card.md"))
    parser.add_argument("--screenshot", default=str(ROOT / "docs" / "judge-card.png"))
    args = parser.parse_args()
    items, human, criterion = sample(args.data, args.contexts, args.seed)
    store = args.store or str(Path(tempfile.mkdtemp(prefix="judge-card-")) / "card.db")
    load_before = os.getloadavg()
    started = time.perf_counter()
    card = cs.judge_card(["embedded", "baseline:length", scripted_judge(human, args.scripted_r, args.seed)],
                         items, human, criteria=[criterion], store=store, repeats=args.repeats,
                         n_resamples=args.resamples, seed=args.seed, concurrency=2)
    seconds = time.perf_counter() - started
    load_after = os.getloadavg()
    command = "python benchmarks/judge_card.py " + " ".join(sys.argv[1:])
    header = [
        "# Judge card: the worked example (USR Topical-Chat, overall)", "",
        f"`{command}` — {len(items)} responses ({args.contexts} contexts × 6 systems, seed {args.seed}), "
        f"{len(human)} expert ratings, {args.resamples} bootstrap resamples; wall time {seconds:.0f} s "
        f"(judging and statistics) on 2 shared cores, load average {load_before[0]:.1f} before and "
        f"{load_after[0]:.1f} after.", "",
        "The judges: the embedded SmolLM2-135M (asked twice per item at temperature 0.7), response "
        "length in words, and a scripted judge of known quality (the experts' mean plus seeded noise "
        f"for r ≈ {args.scripted_r}; it sees the answers, so it is a yardstick, not a method). The data "
        "set is research-only: it is read at run time and nothing of its text is stored here.", "",
    ]
    Path(args.out).write_text("\n".join(header) + card.to_markdown().split("\n", 1)[1], encoding="utf-8")
    print(card.to_markdown())
    page = card.to_html(title="Judge card: USR Topical-Chat")
    if args.screenshot and screenshot(page, Path(args.screenshot)):
        print(f"screenshot: {args.screenshot}", file=sys.stderr)
    print(f"{seconds:.0f} s; load {load_before[0]:.1f} -> {load_after[0]:.1f}", file=sys.stderr)


if __name__ == "__main__":
    main()
