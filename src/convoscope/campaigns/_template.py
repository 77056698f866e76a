"""`campaign init`: a campaign.yaml and guidelines.md to edit."""

from __future__ import annotations

import re
from pathlib import Path

from convoscope.campaigns._spec import GUIDELINES_FILE, SPEC_FILE, CampaignError

CAMPAIGN_TEMPLATE = """\
# A human-evaluation campaign. Edit, then: convoscope campaign serve {directory} --items items.jsonl
name: {name}
title: Response candidates study
granularity: turn            # turn (judge one response) or dialogue (judge a whole conversation)
criteria:                    # judged in this order: all candidates for the first, then the next
  - response-candidates:appropriateness
  - response-candidates:contextualization
  - response-candidates:listening
  - response-candidates:correctness
# criteria_files: [my-criteria.yaml]   # your own criteria (see `convoscope criteria validate`), by name
include_reference: true      # the ground-truth turn is judged as one more candidate
contexts_per_batch: 10       # the protocol suggests about 10 dialogue contexts per batch
annotators_per_batch: 7      # and 7 people per batch
expected_minutes_per_batch: 30
max_minutes_per_batch: 60
guidelines_summary: >
  Read the whole dialogue first. Judge only the highlighted candidate, as the next turn.
  Choose "I don't know" when you truly cannot decide, and say why.
items: items.jsonl           # candidates to judge (relative to this folder); --items overrides
store: campaign.db           # where answers are stored: a SQLite path or a postgresql:// URL
qualification:
  enabled: true
  contexts: 5                # the qualification batch
  reference_annotators: []   # ids of the internal annotators whose answers are the reference
  kappa_threshold: 0.21      # Fleiss' kappa with the reference annotators needed to qualify
reporting:                   # facts for the report's checklist that the data cannot tell
  sampling: Native speakers recruited through ...; qualification batch as above.
  demographics: ""
  payment: ""                # e.g. 9 GBP per hour, about 4.50 GBP per batch
  platform: convoscope campaign web app, self-hosted
"""

GUIDELINES_TEMPLATE = """\
# Annotator guidelines

You will read short dialogues. For each one you see several candidate next turns. For each
criterion, judge every candidate in turn; the dialogue stays on screen the whole time.

## Answers
- **Positive** when the candidate clearly meets the criterion.
- **Negative** when it clearly does not; then tick the reasons that apply.
- **I don't know** only when parts of the candidate meet the criterion and parts do not; then
  write a short note saying why.

## Examples
Dialogue: **A:** I just got back from a week of hiking in the Alps.

- Candidate "**B:** That sounds amazing, which trail did you like best?" is **appropriate** and
  **contextualized**: it follows on and picks up the trip.
- Candidate "**B:** Nice. I like pizza." is **not appropriate**: tick *incoherence*. It is also
  **not contextualized**: tick *genericness*.
- Candidate "**B:** Wow, the Alps! I went to the beach in 2019 too." may earn **I don't know** for
  appropriateness: it reacts to the trip but then drifts. Write that in the note.

Replace these with two or three examples from your own data.
"""


def init_campaign(directory: str | Path, *, name: str | None = None) -> list[Path]:
    """Write the template campaign.yaml and guidelines.md into ``directory``; never overwrite."""
    target = Path(directory)
    files = {SPEC_FILE: CAMPAIGN_TEMPLATE, GUIDELINES_FILE: GUIDELINES_TEMPLATE}
    existing = [target / file for file in files if (target / file).exists()]
    if existing:
        raise CampaignError(existing[0], "already exists; not overwriting it")
    target.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^a-z0-9_\-]+", "-", (name or target.resolve().name).lower()).strip("-")
    slug = slug if slug[:1].isalpha() else f"study-{slug}"
    written = []
    for file, text in files.items():
        (target / file).write_text(text.format(name=slug, directory=target), encoding="utf-8")
        written.append(target / file)
    return written
