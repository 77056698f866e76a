"""`campaign init`: a campaign.yaml and guidelines.md to edit."""

from __future__ import annotations

import json
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
pairwise: false              # true: people compare two responses side by side (first / second / tie)
contexts_per_batch: 10       # the protocol suggests about 10 dialogue contexts per batch
annotators_per_batch: 7      # and 7 people per batch
expected_minutes_per_batch: 30
max_minutes_per_batch: 60
guidelines_summary: >
  Read the whole dialogue first. Judge only the highlighted candidate, as the next turn.
  Choose "I don't know" when you truly cannot decide, and say why.
items: items.jsonl           # candidates to judge (an example to replace); `serve --items` rewrites it
store: campaign.db           # where answers are stored: a SQLite path or a postgresql:// URL
language: en                 # the annotators' interface: en or ko
instructions: true           # show guidelines.md once, with a start button, before the first task
# consent: consent.md        # a Markdown consent text accepted before the first task
qualification:
  enabled: true
  contexts: 5                # the qualification batch
  reference_annotators: []   # ids of the internal annotators whose answers are the reference
  min_kappa: 0.21            # Cohen's kappa needed with EACH reference annotator
  min_accuracy: 0.6          # share of answers equal to the references' majority answer
  max_chance_pass: 0.05      # refuse to qualify on answers a random answerer matches this often
  when_cannot_tell: refuse   # too few answers to tell from chance: refuse (paid) or admit
  references_in_main: false  # reference annotators also take places in main batches
# platform:                  # a crowdsourcing platform: `serve` prints the study link to give it
#   kind: prolific           # prolific or mturk
#   completion_code: ABC123  # after the assigned work; Prolific participants are redirected with it
#   screen_out_code: XYZ789  # screened out before any task (a Prolific code with the screen-out action)
#   partial_code: PRT456     # left after some tasks (Prolific: 'manually review'); paid as a bonus
#   pay_per_task: 0.05       # what one answer is worth: the bonus the ledger recommends
#   screen_out_reward: 0.10  # the screen-out reward set on Prolific (shown on the page)
#   batches_per_participant: 1
# questionnaires:            # YAML question lists next to this file (see docs/campaigns.md)
#   before: before.yaml      # after consent: demographics, eligibility (accept: screens out)
#   after: after.yaml        # after the assigned work: comments
# attention:                 # gold items: items whose meta.gold gives the expected answers
#   per_batch: 1             # placed in every main batch
#   max_failures: 0          # one more failed check triggers the action
#   action: block            # block (answers leave the results) or flag
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


# Seven short contexts, two systems' candidates each plus the turn that really followed: enough
# for the 5-context qualification batch and one main batch, so `serve` works straight after
# `init`. Written for the template; replace items.jsonl with your own candidates.
_EXAMPLE_CONTEXTS = (
    ("I just adopted a puppy and she chews everything.",
     "Give her chew toys and swap one in whenever she grabs a shoe.", "That's nice. Do you like cats?",
     "Oh no, puppies are like that! Have you tried a few chew toys?"),
    ("Any tips for my first half marathon next month?",
     "Keep most runs easy, taper the last week and don't try new shoes on race day.",
     "Marathons are 42 km long.", "Start slower than you feel like and drink at every station."),
    ("I can't decide between learning Spanish or Japanese.",
     "Which would you use more? Spanish is quicker to start; Japanese takes longer but may excite you more.",
     "Learning is good.", "What draws you to each of them?"),
    ("My tomato plants have yellow leaves at the bottom.",
     "Lower leaves often yellow from overwatering or low nitrogen; check the soil before watering.",
     "Tomatoes are red when ripe.", "That can be normal for old leaves, but check if you water too much."),
    ("I'm nervous about a job interview tomorrow.",
     "That's natural. Prepare two stories about your work and get some sleep tonight.",
     "Interviews happen every day.", "You'll do fine! What is the job?"),
    ("What's a good board game for four friends?",
     "Try Codenames or Ticket to Ride: easy to learn and fun with four.", "I like games.",
     "Have you played Catan? It's great with four."),
    ("I keep forgetting to drink water during the day.",
     "Keep a bottle on your desk and set a reminder every two hours.",
     "Water is made of hydrogen and oxygen.",
     "A big bottle you refill twice a day helps me."),
)


def example_items() -> list[dict[str, object]]:
    """The template's example candidates as item records (JSONL lines)."""
    rows: list[dict[str, object]] = []
    for number, (user, good, weak, reference) in enumerate(_EXAMPLE_CONTEXTS, start=1):
        context = [{"speaker": "user", "text": user}]
        for system, text in (("bot-a", good), ("bot-b", weak)):
            rows.append({"id": f"c{number}-{system}", "context": context, "response": text,
                         "reference": reference, "system": system, "language": "en",
                         "meta": {"context_id": f"c{number}"}})
    return rows


def init_campaign(directory: str | Path, *, name: str | None = None) -> list[Path]:
    """Write the template campaign.yaml and guidelines.md into ``directory`` (never overwriting),
    and example items.jsonl when there is none yet."""
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
    items = target / "items.jsonl"
    if not items.exists():
        items.write_text("".join(json.dumps(row) + "\n" for row in example_items()), encoding="utf-8")
        written.append(items)
    return written
