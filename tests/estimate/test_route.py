"""Routing items from a judged run to people: reasons recorded, random share honoured."""

import pytest

from convoscope import Verdict
from convoscope.errors import ConfigError
from convoscope.estimate import select_items


def _run():
    rows = []
    for index in range(40):
        item = f"i{index}"
        a = 3 if index % 10 else 1  # member a disagrees with b on every tenth item
        rows += [Verdict(item_id=item, criterion="overall", rater="model:a", value=a),
                 Verdict(item_id=item, criterion="overall", rater="model:b", value=3),
                 Verdict(item_id=item, criterion="overall", rater="panel:mean:a+b", value=2)]
    rows.append(Verdict(item_id="i5", criterion="overall", rater="model:c", value=2,
                        distribution={"1": 0.34, "2": 0.33, "3": 0.33}))
    rows.append(Verdict(item_id="i7", criterion="decision", rater="model:survey", value="hold"))
    return rows


def test_disagreement_flat_and_values_are_selected_with_their_reasons():
    chosen = {s.item_id: s.reasons for s in select_items(_run(), random=0, values=["hold"])}
    assert chosen["i0"] == ("disagreement:overall",)
    assert chosen["i10"] == ("disagreement:overall",)
    assert chosen["i5"] == ("disagreement:overall", "flat:overall")  # c said 2 where a and b said 3
    assert chosen["i7"] == ("value:hold",)
    assert set(chosen) == {"i0", "i10", "i20", "i30", "i5", "i7"}


def test_the_random_sample_has_the_asked_size_and_is_seeded():
    first = select_items(_run(), random=12, seed=4)
    again = select_items(_run(), random=12, seed=4)
    assert first == again
    assert sum(s.in_random_sample for s in first) == 12
    other = select_items(_run(), random=12, seed=5)

    def sample(selection):
        return {s.item_id for s in selection if s.in_random_sample}

    assert sample(other) != sample(first)


def test_the_random_sample_is_uniform_over_all_items_not_just_the_hard_ones():
    counts = dict.fromkeys((f"i{n}" for n in range(40)), 0)
    for seed in range(400):
        for selected in select_items(_run(), random=10, seed=seed, disagreement=False, flat_above=None):
            counts[selected.item_id] += selected.in_random_sample
    # Each item should be drawn 400 * 10 / 40 = 100 times; a binomial sd is ~8.7.
    assert min(counts.values()) > 65 and max(counts.values()) < 135


def test_a_random_sample_larger_than_the_run_is_refused():
    with pytest.raises(ConfigError, match="only 40 items"):
        select_items(_run(), criterion="overall", random=41)
