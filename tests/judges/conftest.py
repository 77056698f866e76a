import pytest

from convoscope.criteria import Criterion, ExplanationOption, Level, Scale


@pytest.fixture
def effort():
    return Criterion(
        name="effort", question="How much effort does the answer show?", definition="Effort.",
        scale=Scale(kind="range", minimum=0, maximum=4),
        levels=tuple(Level(value=v, definition=f"level {v}", examples=(f"example {v}",))
                     for v in range(5)),
    )


@pytest.fixture
def appropriate():
    return Criterion(
        name="appropriateness", question="Is it appropriate?", definition="Fits the context.",
        scale=Scale(kind="labels", labels=("positive", "negative"), allow_idk=True),
        options=(ExplanationOption(name="genericness", description="bland"),
                 ExplanationOption(name="repetition", description="repeats")),
    )


@pytest.fixture
def kpi():
    return Criterion(
        name="follow-up", question="Does the bot follow up?", definition="Follow-up.",
        scale=Scale(kind="binary", labels=("fulfilled", "not fulfilled")), ask_relevance=True,
    )
