"""Human labels mapped to the values judges store, by the criterion's scale (issue 15)."""

import json

import pytest
from click.testing import CliRunner

from convoscope.analysis import Rating, label_value, map_labels
from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.criteria import Criterion
from convoscope.errors import LocatedError

_register()
ISSUE = Criterion(name="irrelevant", question="Is the turn irrelevant?", definition="Off topic.",
                  scale={"kind": "binary", "labels": ["present", "absent"]})
KPI = Criterion(name="kpi", question="Is the KPI met?", definition="Met.",
                scale={"kind": "binary", "labels": ["fulfilled", "not fulfilled"]})
TONE = Criterion(name="tone", question="Tone?", definition="The tone.",
                 scale={"kind": "labels", "labels": ["warm", "neutral", "cold"]})


@pytest.mark.parametrize(("criterion", "text", "value"), [
    (ISSUE, "present", 1), (ISSUE, " Absent ", 0), (ISSUE, "yes", 1), (ISSUE, 0, 0),
    (KPI, "fulfilled", 1), (KPI, "not fulfilled", 0), (TONE, "Warm", "warm"),
    (None, "present", 1), (None, "No", 0), (None, "maybe", "maybe"), (None, None, None),
    (None, float("nan"), None), (None, True, 1),
])
def test_label_value(criterion, text, value):
    assert label_value(criterion, text) == value


def test_a_label_off_the_scale_is_an_error_naming_the_allowed_values():
    with pytest.raises(ValueError, match=r"'sometimes' is not on the scale of 'tone'.*warm"):
        label_value(TONE, "sometimes")


def test_map_labels_names_file_and_line():
    ratings = [Rating("a", "tone", "human:1", "warm", source="h.csv:2"),
               Rating("b", "tone", "human:1", "hot", source="h.csv:3"),
               Rating("c", "tone", "human:1", "I don't know", source="h.csv:4")]
    with pytest.raises(LocatedError) as caught:
        map_labels(ratings, {"tone": TONE})
    assert (caught.value.path, caught.value.line, caught.value.field) == ("h.csv", 3, "value")
    assert [r.value for r in map_labels(ratings[::2], {"tone": TONE})] == ["warm", "I don't know"]


def test_metaeval_criteria_file_maps_labels_and_unmappable_labels_compute_nothing(tmp_path):
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("".join(json.dumps({"item_id": f"i{i}", "criterion": "kpi", "rater": "model:j",
                                            "value": i % 2}) + "\n" for i in range(12)))
    humans = tmp_path / "h.csv"
    humans.write_text("item_id,rater,criterion,value\n" + "".join(
        f"i{i},{p},kpi,{'fulfilled' if i % 2 else 'not fulfilled'}\n" for i in range(12) for p in "ab"))
    suite = tmp_path / "kpi.yaml"
    suite.write_text("criteria:\n  - name: kpi\n    question: Is the KPI met?\n    definition: Met.\n"
                     "    scale: {kind: binary, labels: [fulfilled, not fulfilled]}\n")
    out = tmp_path / "m.json"
    runner = CliRunner()
    result = runner.invoke(cli, ["metaeval", str(verdicts), "--human", str(humans), "--criteria-file",
                                 str(suite), "--resamples", "20", "--out", str(out)])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(out.read_text())["rows"]
    assert row["binary"]["f1_pos"] == 1.0
    humans.write_text(humans.read_text().replace("not fulfilled", "bad").replace("fulfilled", "good"))
    result = runner.invoke(cli, ["metaeval", str(verdicts), "--human", str(humans), "--resamples", "20"])
    assert result.exit_code == 1 and "nothing could be computed" in result.output
