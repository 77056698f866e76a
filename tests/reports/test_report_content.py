"""The numbers in each report section, checked against hand-computed values for the samples in
verdict_samples.py, and the detection of which sections a verdict file calls for."""

import pytest
from tables import rows_by, tables
from verdict_samples import candidate_rows, dialogue_issue_rows, kpi_rows

from convoscope.judges import Verdict
from convoscope.reports import majority, render_report


def verdicts(rows):
    return [Verdict.model_validate(row) for row in rows]


@pytest.fixture(scope="module")
def page():
    return render_report(verdicts(dialogue_issue_rows() + candidate_rows() + kpi_rows()))


def test_issue_heatmap_rates_per_chatbot_and_language(page):
    judges = rows_by(page, "heatmap-judges", 0, 1)
    header = tables(page, "heatmap-judges")[0][0]
    assert header == ["chatbot", "language", "repetitive", "lacks-empathy"]
    assert judges[("bot-b", "en")][2:] == ["100% 2/2", "0% 0/2"]
    assert judges[("bot-a", "en")][2:] == ["0% 0/2", "0% 0/2"]
    # the members split 1-0 on d5; the panel's pooled verdict (1) is what counts
    assert judges[("bot-a", "ko")][3] == "100% 1/1"
    people = rows_by(page, "heatmap-people", 0, 1)
    assert people[("bot-b", "en")][2] == "0% 0/2"  # ann 1, bo 0: a tie goes to "absent"


def test_overall_mean_per_chatbot_with_counts(page):
    overall = rows_by(page, "overall", 0)
    assert overall[("bot-a",)][1:] == ["4.00", "3"] and overall[("bot-b",)][1:] == ["2.00", "2"]


def test_flagged_dialogues_are_listed_with_escaped_reasons(page):
    assert "<b>bot-b</b>" not in page
    assert "&lt;b&gt;bot-b&lt;/b&gt; says the same thing twice" in page
    anchor = page.split("repetitive: 2 of 2 dialogues of bot-b (en)'><a href='#")[1].split("'")[0]
    listing = page.split(f"id='{anchor}'>")[1].split("</div>")[0]
    assert "<b>d3</b>" in listing and "<b>d4</b>" in listing and "d1" not in listing


def test_candidates_by_majority_and_by_all_votes(page):
    table = rows_by(page, "candidates", 1)
    # columns: criterion, system, positive (majority), positive (all), negative (all), idk, n, votes
    assert table[("bot-a",)][2:6] == ["100%", "67%", "33%", "0%"]
    assert table[("bot-b",)][2:6] == ["0%", "0%", "67%", "33%"]
    assert table[("bot-c",)][2:6] == ["0%", "33%", "67%", "0%"]
    assert table[("ground-truth (reference)",)][2:4] == ["100%", "100%"]
    assert list(table)[-1] == ("ground-truth (reference)",)  # the reference candidate comes last


def test_negative_answers_broken_down_by_explanation_option(page):
    breakdown = rows_by(page, "breakdown", 0)
    assert breakdown[("bot-a",)][2] == "incoherence: 1"
    assert breakdown[("bot-b",)][2] == "incoherence: 2"
    assert breakdown[("bot-c",)][2] == "(no option chosen): 2"


def test_kpi_rates_per_judge_pooled_and_metric(page):
    kpis = rows_by(page, "kpis", 0, 1)
    # columns: KPI, rater, turns, relevant, relevance rate, fulfilled among relevant, unscored
    assert kpis[("follow-up", "model:m#brand")][2:6] == ["4", "3", "75%", "67%"]
    assert kpis[("follow-up", "model:m#strict")][2:6] == ["4", "3", "75%", "100%"]
    assert kpis[("follow-up", "panel:majority")][2:6] == ["4", "3", "75%", "67%"]
    assert kpis[("low-latency", "metric:latency")][2:6] == ["3", "–", "–", "67%"]


def test_panel_agreement_and_measurements(page):
    agreement = rows_by(page, "agreement", 0)[("follow-up",)]
    # brand 1,0,1,1 vs strict 1,1,0,1: two of four agree; Fleiss' kappa (0.5 - 0.625) / 0.375
    assert agreement[1:] == ["2", "4", "50%", "50%", "-0.33", "100%"]
    measured = rows_by(page, "measurements", 0, 1)[("low-latency", "seconds")]
    assert measured[2:] == ["3", "1.83", "1.20", "3.50"]


def test_sections_follow_the_criteria_present():
    only_kpis = render_report(verdicts(kpi_rows()))
    assert "id=kpis" in only_kpis and "id=dialogue-issues" not in only_kpis
    assert "id=response-candidates" not in only_kpis
    generic = render_report(verdicts([
        {"item_id": "a", "criterion": "effort", "rater": "model:x", "value": 3, "system": "s1"},
        {"item_id": "b", "criterion": "effort", "rater": "model:x", "value": 1, "system": "s2"},
        {"item_id": "a", "criterion": "effort", "rater": "human:p", "value": 2, "system": "s1"}]))
    scores = rows_by(generic, "scores", 1)
    assert scores[("model:x",)][2:4] == ["2", "2.00"] and scores[("human:p",)][2:4] == ["1", "2.00"]
    assert "id=kpis" not in generic and "id=dialogue-issues" not in generic


def test_people_and_judges_side_by_side_only_when_both_rated():
    judges_only = [r for r in dialogue_issue_rows() if not r["rater"].startswith("human:")]
    page = render_report(verdicts(judges_only))
    assert tables(page, "heatmap-judges") and not tables(page, "heatmap-people")


def test_majority_tie_rule():
    assert majority([1, 0]) == 0 and majority([1, 1, 0]) == 1
    assert majority([3, 5]) == 3 and majority(["b", "a"]) == "a"


def test_no_verdicts_is_an_error():
    with pytest.raises(ValueError, match="no verdicts"):
        render_report([])


def test_text_from_items_is_escaped_in_examples():
    from convoscope.items import Item

    rows = [r for r in dialogue_issue_rows() if r["item_id"] == "d3"]
    item = Item(id="d3", system="bot-b", context=(
        {"speaker": "user", "text": "<script>alert('x')</script> hello"},
        {"speaker": "bot-b", "text": "hi & welcome"}))
    page = render_report(verdicts(rows), items=[item])
    # the shared template layer escapes (markupsafe writes the apostrophe as &#39;)
    assert "<script>" not in page and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; hello" in page
    assert "hi &amp; welcome" in page


def test_long_example_lists_are_capped_with_the_rest_named():
    from convoscope.reports._issues import MAX_EXAMPLES

    rows = [{"item_id": f"x{i}", "criterion": "repetitive", "rater": "model:a", "value": 1,
             "system": "bot", "language": "en", "reason": f"loop {i}"} for i in range(MAX_EXAMPLES + 3)]
    page = render_report(verdicts(rows))
    rest = ", ".join(f"x{i}" for i in range(MAX_EXAMPLES, MAX_EXAMPLES + 3))
    assert page.count("<li><b>x") == MAX_EXAMPLES and f"… and 3 more: {rest}" in page


def test_your_own_kpis_are_recognised_from_their_criteria_file():
    from convoscope.criteria import Criterion, Scale

    greets = Criterion(name="greets-user", suite="my-kpis", question="Greets?", definition="A greeting.",
                       scale=Scale(kind="binary", labels=("fulfilled", "not fulfilled")), ask_relevance=True)
    rows = [{"item_id": "a", "criterion": "greets-user", "rater": "model:x", "value": 1, "system": "s"},
            {"item_id": "b", "criterion": "greets-user", "rater": "model:x", "value": 0, "system": "s"}]
    assert "id=kpis" not in render_report(verdicts(rows))  # nothing marks it as a KPI
    page = render_report(verdicts(rows), criteria=[greets])
    assert rows_by(page, "kpis", 0, 1)[("greets-user", "model:x")][2:6] == ["2", "–", "–", "50%"]


def test_an_offline_judge_is_named_for_what_it_is():
    rows = dialogue_issue_rows()
    assert "Offline judge." not in render_report(verdicts(rows))
    embedded = [{**row, "rater": "model:embedded:smollm2[completion]"} for row in rows
                if row["rater"].startswith("model:")]
    assert "Offline judge." in render_report(verdicts(embedded))


def test_heatmap_cells_link_to_the_viewer_when_it_is_named():
    page = render_report(verdicts(dialogue_issue_rows()), viewer_url="http://127.0.0.1:8765/")
    assert ("href='http://127.0.0.1:8765/?criterion=repetitive&amp;value=1&amp;system=bot-b&amp;language=en'"
            in page)
    without = render_report(verdicts(dialogue_issue_rows()))
    assert "class=viewer" not in without
