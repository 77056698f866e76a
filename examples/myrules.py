"""Rule-based Python judges used by the docs (docs/python-judges.md, docs/judge-card.md, docs/survey.md).

Put this folder on PYTHONPATH to use them from the command line:
    PYTHONPATH=examples convoscope judge ... --judge python:myrules:specifics
"""

import convoscope as cs


@cs.python_judge(name="specifics", version="1")
def specifics(item, criterion):
    """effort 0-7 from length and concrete words (numbers, names)."""
    words = (item.response or "").split()
    concrete = sum(word[:1].isdigit() or word[:1].isupper() for word in words[1:])
    return min(7, len(words) // 4 + concrete), f"{len(words)} words, {concrete} concrete"


@cs.python_judge(name="strict", version="1")
def strict(item, criterion):
    """overall 1-5: a response of a few words is poor, a question back to the user is a plus."""
    words = (item.response or "").split()
    score = 1 + min(3, len(words) // 5) + ("?" in (item.response or ""))
    return min(5, score), f"{len(words)} words"


@cs.python_judge(name="by-length", version="1")
def by_length(item, criterion):
    """Any numeric scale (the survey's effort 0-7, relevance and completeness 0-4): the share of
    twelve words the answer reaches, as a point on the scale (a float is kept as the expected score)."""
    words = len((item.response or "").split())
    return max(criterion.scale.values()) * min(1.0, words / 12), f"{words} words"
