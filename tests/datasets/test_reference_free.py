"""Reference-free loading: USR's ground-truth turn can be kept from judges, in Python and in the CLI."""

from click.testing import CliRunner

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.datasets import load_benchmark
from convoscope.items import read_items

_register()


def test_reference_free_drops_only_the_reference(samples):
    with_reference = load_benchmark("usr-topicalchat", samples / "usr")
    without = load_benchmark("usr-topicalchat", samples / "usr", reference_free=True)
    assert sum(item.reference is not None for item in with_reference.items) == 4  # all but the 2 truths
    assert all(item.reference is None for item in without.items)
    for kept, dropped in zip(with_reference.items, without.items, strict=True):
        assert kept.model_copy(update={"reference": None}) == dropped
    assert without.human == with_reference.human and without.criteria == with_reference.criteria


def test_without_references_leaves_sets_without_references_as_they_are(samples):
    fed = load_benchmark("fed-turn", samples)
    assert fed.without_references().items == fed.items


def test_export_no_reference(samples, tmp_path):
    items = tmp_path / "items.jsonl"
    result = CliRunner().invoke(cli, ["datasets", "export", "usr-topicalchat", str(samples / "usr"),
                                      "--items", str(items), "--human", str(tmp_path / "h.jsonl"),
                                      "--no-reference"])
    assert result.exit_code == 0, result.output
    loaded = read_items(items)
    assert len(loaded) == 6 and all(item.reference is None for item in loaded)
