"""Users' own criteria files: what loads, and errors that name file, line and field."""

import pytest

from convoscope.criteria import CriteriaError, get_criterion, load_criteria

GOOD = """\
suite: my-kpis
defaults:
  scale: {kind: binary, labels: [fulfilled, not fulfilled]}
  ask_relevance: true
criteria:
  - name: greets-user
    question: Does the assistant greet the user?
    definition: A friendly greeting in the first turn.
    levels:
      - {value: fulfilled, definition: "Greets."}
      - {value: not fulfilled, definition: "Does not greet."}
  - name: brevity
    question: Is the answer short?
    definition: At most two sentences.
    scale: {kind: range, minimum: 1, maximum: 3}
"""


def write(tmp_path, text, name="criteria.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_suite_file_with_defaults_loads(tmp_path):
    greets, brevity = load_criteria(write(tmp_path, GOOD))
    assert greets.suite == "my-kpis" and greets.ask_relevance and greets.scale.kind == "binary"
    assert [level.value for level in greets.levels] == [1, 0]
    assert brevity.scale.kind == "range"  # a criterion's own field beats the default


def test_a_single_criterion_and_a_list_load(tmp_path):
    one = write(tmp_path, "name: a\nquestion: q?\ndefinition: d\nscale: {kind: binary}\n", "one.yaml")
    assert [c.name for c in load_criteria(one)] == ["a"]
    many = write(tmp_path, "- {name: a, question: q, definition: d, scale: {kind: binary}}\n"
                           "- {name: b, question: q, definition: d, scale: {kind: binary}}\n", "many.yaml")
    assert [c.name for c in load_criteria(many)] == ["a", "b"]


def test_a_bad_range_names_line_and_field(tmp_path):
    path = write(tmp_path, GOOD.replace("minimum: 1, maximum: 3", "minimum: 3, maximum: 1"))
    with pytest.raises(CriteriaError) as error:
        load_criteria(path)
    assert error.value.line == 15 and error.value.field == "scale"
    assert "maximum > minimum" in str(error.value) and "criteria.yaml, line 15" in str(error.value)


def test_a_misspelt_field_is_named(tmp_path):
    path = write(tmp_path, GOOD.replace("    definition: At most", "    defintion: At most"))
    with pytest.raises(CriteriaError) as error:
        load_criteria(path)
    assert error.value.line == 14
    assert "defintion" in str(error.value) or "definition" in str(error.value)


def test_a_level_off_the_scale_is_rejected(tmp_path):
    path = write(tmp_path, GOOD.replace("{value: fulfilled,", "{value: maybe,"))
    with pytest.raises(CriteriaError, match="'maybe' is not on the scale") as error:
        load_criteria(path)
    assert (error.value.line, error.value.field) == (10, "levels")


def test_broken_yaml_and_duplicates(tmp_path):
    with pytest.raises(CriteriaError, match="not valid YAML") as error:
        load_criteria(write(tmp_path, "criteria:\n  - name: [unclosed\n"))
    assert error.value.line is not None
    duplicated = GOOD.replace("name: brevity", "name: greets-user")
    with pytest.raises(CriteriaError, match="defined twice") as error:
        load_criteria(write(tmp_path, duplicated))
    assert error.value.line == 12


def test_references_to_criteria(tmp_path):
    assert get_criterion("survey:effort").scale.maximum == 7
    assert get_criterion("survey/effort").name == "effort"
    assert get_criterion("effort").suite == "survey"
    with pytest.raises(CriteriaError, match="survey:overall"):
        get_criterion("overall")  # in two suites: the error says which names to use
    with pytest.raises(CriteriaError, match="no criterion"):
        get_criterion("nonsense")
    path = write(tmp_path, GOOD)
    assert get_criterion("brevity", extra_paths=[path]).suite == "my-kpis"
