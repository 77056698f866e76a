"""Criteria YAML that would hang or crash the loader fails at once with a located error
(issue 11, observation 8)."""

import pytest

from convoscope.criteria import CriteriaError, load_criteria

CRITERION = """
criteria:
  - name: ok
    question: Is it ok?
    definition: Okay-ness.
    scale: {kind: range, minimum: 0, maximum: 3}
"""


def _bomb(levels: int = 9) -> str:
    lines = ['  - &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"  - &a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]" for n in range(1, levels)]
    return "source:\n" + "\n".join(lines) + f"\ndescription: *a{levels - 1}\n" + CRITERION


def test_a_yaml_alias_bomb_fails_fast_with_the_line(tmp_path):
    # 9 ** 9 (387 million) strings once expanded: before the limit this grew past 2.9 GB.
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb())
    with pytest.raises(CriteriaError, match=r"bomb.yaml, line \d+: aliases expand the document past"):
        load_criteria(path)


def test_a_few_aliases_are_still_fine(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("""
criteria:
  - name: one
    question: Q?
    definition: D.
    scale: &s {kind: range, minimum: 0, maximum: 3}
  - name: two
    question: Q?
    definition: D.
    scale: *s
""")
    assert [c.scale.maximum for c in load_criteria(path)] == [3, 3]


def test_a_recursive_alias_and_deep_nesting_are_located_errors(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("source: &x [*x]\n" + CRITERION)
    with pytest.raises(CriteriaError, match="loop.yaml, line 1: an alias refers to the collection"):
        load_criteria(path)
    deep = tmp_path / "deep.yaml"
    deep.write_text("source: " + "[" * 20000 + "]" * 20000 + "\n" + CRITERION)
    with pytest.raises(CriteriaError, match="deep.yaml, line 1: not usable YAML: nested too deeply"):
        load_criteria(deep)


def test_a_suite_field_of_the_wrong_type_is_a_located_error(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text("title: [not, a, title]\n" + CRITERION)
    with pytest.raises(CriteriaError, match="suite.yaml, line 1, field 'title': suite field 'title'"):
        load_criteria(path)
