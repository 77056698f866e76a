"""Issue 36, observation 7 (part): a card states its provenance as a model card does."""

import json

import convoscope as cs
from convoscope.card._render import provenance_table

from .conftest import OVERALL, RESAMPLES, oracle, study


def test_a_card_states_version_time_prompt_hash_data_licence_use_and_limits(tmp_path):
    items, humans = study(n_contexts=12)
    options = dict(criteria=[OVERALL], n_resamples=RESAMPLES, probes=False, pairs=0, cache_path=None)
    card = cs.judge_card([oracle], items, humans, store=tmp_path / "p.db", data_source="a study of ours",
                         licence="CC BY 4.0", **options)
    origin = card.provenance
    assert origin.convoscope_version == cs.__version__ and origin.created.endswith("+00:00")
    assert (origin.data_source, origin.licence) == ("a study of ours", "CC BY 4.0")
    assert origin.intended_use and origin.limits
    ((judge, served, digest),) = origin.judges
    assert judge == "python:oracle" and served == "not reported" and len(digest) == 16
    # The hash follows what decides the prompt: another criterion text, another hash.
    other = OVERALL.model_copy(update={"definition": "Something else entirely."})
    options["criteria"] = [other]
    again = cs.judge_card([oracle], items, humans, store=tmp_path / "q.db", **options)
    assert again.provenance.judges[0][2] != digest
    assert json.loads(json.dumps(card.to_dict()))["provenance"]["licence"] == "CC BY 4.0"
    markdown = card.to_markdown()
    assert "## Provenance" in markdown and "CC BY 4.0" in markdown and digest in markdown
    assert "CC BY 4.0" in card.to_html()
    assert provenance_table(card)[2][0] == ("convoscope version", cs.__version__)
