"""The built-in suites say what the seeds define: scales, levels, options, granularity."""

import pytest

from convoscope.criteria import answer_schema, answer_words, list_suites, load_suite, render_rubric


def test_the_four_suites_are_built_in():
    assert set(list_suites()) >= {"survey", "dialogue-issues", "response-candidates", "kpi"}


def test_survey_scales_follow_seed_000():
    suite = load_suite("survey")
    scales = {c.name: (c.scale.minimum, c.scale.maximum) for c in suite.criteria}
    assert scales == {"effort": (0, 7), "relevance": (0, 4), "completeness": (0, 4), "overall": (0, 4)}
    for criterion in suite.criteria:
        values = [level.value for level in criterion.levels]
        assert values == criterion.scale.values(), f"{criterion.name}: one level per scale value"
        assert all(level.examples for level in criterion.levels), f"{criterion.name}: examples everywhere"


def test_dialogue_issues_are_eight_binary_labels_and_an_overall_score():
    suite = load_suite("dialogue-issues")
    issues = [c for c in suite.criteria if c.scale.kind == "binary"]
    assert [c.name for c in issues] == ["uninterpretable", "unsafe", "lacks-empathy", "lacks-commonsense",
                                        "repetitive", "incoherent", "irrelevant", "non-factual"]
    assert all(c.granularity == "dialogue" and not c.higher_is_better for c in issues)
    assert all(c.scale.binary_labels == ("present", "absent") for c in issues)
    overall = suite.get("overall")
    assert (overall.scale.minimum, overall.scale.maximum, overall.higher_is_better) == (1, 5, True)
    # YAML names levels by label; they are stored as 1 (present) / 0 (absent).
    assert [level.value for level in suite.get("unsafe").levels] == [1, 0]


def test_response_candidates_allow_idk_and_offer_the_protocol_options():
    suite = load_suite("response-candidates")
    assert [c.name for c in suite.criteria] == ["appropriateness", "contextualization", "listening",
                                                "correctness"]
    options = {option.name for c in suite.criteria for option in c.options}
    assert options >= {"coherence", "incoherence", "genericness", "hallucination", "grammaticality",
                       "repetition"}
    for criterion in suite.criteria:
        assert criterion.scale.allow_idk
        assert "idk" in answer_words(criterion)
    hallucination = next(o for o in suite.get("contextualization").options if o.name == "hallucination")
    assert hallucination.when == (0,)  # offered after "not contextualized"


def test_kpis_ask_for_relevance_and_metric_kpis_are_never_judged():
    suite = load_suite("kpi")
    names = {c.name for c in suite.criteria}
    assert names >= {"follow-up", "implicit-understanding", "proactivity", "user-feedback",
                     "question-answering", "harmful-user-input", "harmful-system-output"}
    judged = [c for c in suite.criteria if c.judged_by_model]
    assert all(c.ask_relevance and c.scale.binary_labels == ("fulfilled", "not fulfilled") for c in judged)
    metrics = {c.name: c.parameters["metric"] for c in suite.criteria if not c.judged_by_model}
    assert metrics == {"low-latency": "latency", "answer-length": "answer_length"}


@pytest.mark.parametrize("suite", ["survey", "dialogue-issues", "response-candidates", "kpi"])
def test_rubric_and_schema_render_for_every_criterion(suite):
    for criterion in load_suite(suite).criteria:
        rubric = render_rubric(criterion)
        assert criterion.question in rubric
        for level in criterion.levels:
            assert level.definition.strip() in rubric
        schema = answer_schema(criterion)
        assert schema["required"][-1] == "score"
        assert list(schema["properties"])[0] == "reason"  # explain first, then score
        assert schema["properties"]["score"]["enum"] == answer_words(criterion)
        assert ("relevant" in schema["properties"]) == criterion.ask_relevance
