"""Judge cards in the viewer: read from the JSON `convoscope card` writes, checked, escaped."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient
from viewer_runs import SCRIPT, make_card

from convoscope.errors import LocatedError
from convoscope.viewer import create_app, load


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    return make_card(tmp_path_factory.mktemp("card"))


def test_the_card_page_shows_each_judges_verdict_findings_and_agreement(card):
    written = json.loads(card.read_text())
    page = TestClient(create_app(load(None, cards=[card]))).get("/cards")
    assert page.status_code == 200 and 'href="/cards"' in page.text
    text = page.text.replace("&#39;", "'")
    for judge in written["judges"]:
        assert f"<h2>{judge['judge']}</h2>" in text
        assert judge["verdict"] in text
        for finding in judge["findings"]:
            assert finding["text"] in text
    first = written["judges"][0]["agreement"][0]
    rho = first["judge"]["spearman"]
    assert f"{rho['estimate']:.2f} [{rho['low']:.2f}, {rho['high']:.2f}]" in text
    assert first["replaces_annotator"] in text


def test_a_cards_text_is_escaped_and_a_card_of_another_schema_is_refused(card, tmp_path):
    written = json.loads(card.read_text())
    written["judges"][0]["verdict"] = SCRIPT
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(written))
    page = TestClient(create_app(load(None, cards=[edited]))).get("/cards").text
    assert SCRIPT not in page and "&lt;script&gt;" in page
    edited.write_text(json.dumps({**written, "schema_version": "9"}))
    with pytest.raises(LocatedError, match="edited.json.*schema version '9'"):
        load(None, cards=[edited])
    edited.write_text("{not json")
    with pytest.raises(LocatedError, match="edited.json.*not a judge card"):
        load(None, cards=[edited])
