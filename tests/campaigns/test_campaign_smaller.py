"""The smaller points of issue 24 (observation 8): the pairwise ``raw`` field as documented, a flag
to leave side-biased annotators out, and a colour-blind-safe palette."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from campaign_helpers import write_campaign

from convoscope.campaigns import (
    Campaign,
    Submission,
    export_verdicts,
    invite,
    open_campaign,
    pair_order,
    render_campaign_report,
    shown_slot,
)
from convoscope.campaigns._report import COLOURS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "campaigns.md"
RANK = {"reference": 0, "bot-x": 1, "bot-y": 2}


def _pairwise(tmp_path: Path, extra: str = "") -> Campaign:
    directory = write_campaign(tmp_path / "pairs")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + "pairwise: true\n" + extra, encoding="utf-8")
    more = [{"id": f"c{n}-{system}", "system": system, "response": f"{system} answers {n}",
             "reference": f"gold {n}",
             "context": [{"speaker": "A", "text": f"dialogue {n}"}], "meta": {"context_id": f"c{n}"}}
            for n in range(5, 13) for system in ("bot-x", "bot-y")]  # 11 main contexts: 66 answers each
    with (directory / "items.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("".join("\n" + json.dumps(row) for row in more))
    honest, lazy = (person.id for person in invite(directory, 2))
    campaign = open_campaign(directory)
    for person in (honest, lazy):
        while (work := campaign.work(person)).task is not None:
            first, second = pair_order(person, work.task.candidate)
            better = "1" if RANK[first.system or ""] < RANK[second.system or ""] else "2"
            campaign.submit(person, work.task, Submission(answer=better if person == honest else "1"))
    return campaign


def test_pairwise_raw_is_what_the_docs_show(tmp_path: Path) -> None:
    """Observed: the docs showed `raw` as an object, the export held a JSON string. A Verdict's `raw`
    is text for every rater (judges keep their model's output there), so the docs now show the
    exported line as it is, and `shown_slot` reads it."""
    campaign = _pairwise(tmp_path)
    out = tmp_path / "people.jsonl"
    export_verdicts(campaign, out)
    row = json.loads(out.read_text().splitlines()[0])
    documented = re.search(r'^\{"item_id": "c2:bot-x~bot-y".*$', DOCS.read_text(encoding="utf-8"),
                           re.MULTILINE)
    assert documented, "docs/campaigns.md shows one exported pairwise line"
    example = json.loads(documented.group(0))
    assert set(example) <= set(row) and type(example["raw"]) is type(row["raw"]) is str
    assert set(json.loads(example["raw"])) == set(json.loads(row["raw"])) == {"shown_first", "answer"}
    from convoscope.judges import Verdict

    assert shown_slot(Verdict.model_validate(example)) == ("bot-x", "second")


def test_side_biased_annotators_can_be_left_out_and_the_report_says_so(tmp_path: Path) -> None:
    """Observed: a position-biased annotator was reported but still counted."""
    campaign = _pairwise(tmp_path)
    biased = campaign.side_biased()
    assert list(biased) == ["a002"] and biased["a002"] < 0.05  # always the response shown first
    counted = {r.criterion: r.votes for r in campaign.pair_results(n_resamples=0)}
    kept = {r.criterion: r for r in campaign.pair_results(n_resamples=0, exclude_side_biased=True)}
    assert all(kept[name].votes == counted[name] // 2 for name in counted)  # a001's votes only
    assert all(list(r.excluded) == ["a002"] for r in kept.values())
    assert "still counted" in render_campaign_report(campaign, n_resamples=0)
    html = render_campaign_report(campaign, exclude_side_biased=True, n_resamples=0)
    assert "left out of the win rates and strengths" in html and "a002" in html
    out = tmp_path / "kept.jsonl"
    export_verdicts(campaign, out, exclude_side_biased=True)
    assert "human:a002" not in out.read_text() and "human:a001" in out.read_text()


def test_exclude_side_biased_is_off_by_default_and_only_for_pairs(tmp_path: Path) -> None:
    campaign = _pairwise(tmp_path / "on", "exclude_side_biased: true\n")
    assert all(r.excluded for r in campaign.pair_results(n_resamples=0))
    directory = write_campaign(tmp_path / "absolute")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + "exclude_side_biased: true\n")
    from convoscope.campaigns import CampaignError, load_campaign

    with pytest.raises(CampaignError) as caught:
        load_campaign(directory)
    assert caught.value.field == "exclude_side_biased"


# Machado, Oliveira & Fernandes (2009), "A physiologically-based model for simulation of color
# vision deficiency", IEEE TVCG 15(6), table 1 at severity 1.0; applied to linear sRGB.
DEFICIENCIES = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
    "normal vision": np.eye(3).tolist(),
}
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])


def _lab(hex_colour: str, simulate: list[list[float]]) -> np.ndarray:
    """CIELAB (D65) of a colour as seen with a vision deficiency (IEC 61966-2-1 sRGB; CIE 1976)."""
    rgb = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = SRGB_TO_XYZ @ np.clip(np.array(simulate) @ linear, 0, 1) / (SRGB_TO_XYZ @ np.ones(3))
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _closest(colours: list[str]) -> float:
    return min(float(np.linalg.norm(_lab(a, m) - _lab(b, m)))
               for m in DEFICIENCIES.values() for a, b in itertools.combinations(colours, 2))


def test_answer_colours_stay_apart_for_colour_blind_readers() -> None:
    """Observed: red/green bars were not colour-blind safe. Positive, negative, "I don't know" and
    "no majority" (the first four colours) must stay at least 30 CIELAB units apart under protan-,
    deuter- and tritanopia, as simulated by Machado et al. (2009)."""
    assert _closest(["#3a7d44", "#c0392b", "#7f8c8d", "#d4a017"]) < 15  # the old red and green
    assert _closest(COLOURS[:4]) >= 30
