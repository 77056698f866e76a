"""The run archive (issue 40): a run carried out of its store in one file that `compare` opens alone."""

from __future__ import annotations

import json
import zipfile

import pytest
from click.testing import CliRunner

import convoscope as cs
from convoscope.cli._app import cli


def _criterion():
    return cs.Criterion(name="long", question="Is it long?", definition="Long answers.",
                        scale={"kind": "range", "minimum": 0, "maximum": 10})


def _two_runs(store):
    """Two real runs of two Python judges on the same items, in a SQLite store."""
    items = [cs.Item(id=f"i{n}", response="word " * n) for n in range(1, 15)]

    @cs.python_judge(name="words")
    def words(item, criterion):
        return min(10, len(item.response.split()))

    @cs.python_judge(name="half")
    def half(item, criterion):
        return min(10, len(item.response.split()) // 2 + (len(item.response) % 3 == 0))

    first = cs.judge(items, [_criterion()], [words], store=store, cache_path=None)
    second = cs.judge(items, [_criterion()], [half], store=store, cache_path=None)
    return first.run_id, second.run_id


def _export(run_id, store, out, *extra):
    result = CliRunner().invoke(cli, ["export-run", run_id, "--store", str(store), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out


def _figures(comparison):
    return comparison.to_pandas().drop(columns=["run_a", "run_b"], errors="ignore").to_dict("records")


@pytest.fixture
def archived(tmp_path):
    """Two runs exported, then the store deleted: only the archives are left."""
    store = tmp_path / "runs.db"
    first, second = _two_runs(store)
    from_store = cs.compare(first, second, store=store)
    a = _export(first, store, tmp_path / "a.cvs.zip")
    b = _export(second, store, tmp_path / "b.cvs.zip")
    for path in tmp_path.glob("runs.db*"):
        path.unlink()
    return a, b, from_store, (first, second)


def test_compare_from_archives_alone_gives_the_figures_of_the_store(archived):
    a, b, from_store, (first, second) = archived
    from_archives = cs.compare(str(a), str(b))
    assert _figures(from_archives) == _figures(from_store)
    assert from_archives.criterion("long").n_items == 14
    assert (from_archives.spec_a, from_archives.spec_b) == (from_store.spec_a, from_store.spec_b)
    result = CliRunner().invoke(cli, ["compare", str(a), str(b), "--fail-if", "worse:long>0.5"])
    assert result.exit_code == 1, result.output  # half the words: clearly worse


def test_an_archive_imported_into_a_new_store_compares_by_run_id(archived, tmp_path):
    a, b, from_store, (first, second) = archived
    target = tmp_path / "new.db"
    for archive in (a, b):
        result = CliRunner().invoke(cli, ["import-run", str(archive), "--store", str(target)])
        assert result.exit_code == 0, result.output
    assert _figures(cs.compare(first, second, store=target)) == _figures(from_store)
    again = CliRunner().invoke(cli, ["import-run", str(a), "--store", str(target)])
    assert again.exit_code == 0 and "0 new" in again.output, again.output
    opened = cs.Store(target)
    try:
        assert sorted(opened.run_ids()) == sorted([first, second])
        assert len(opened.verdicts()) == 28  # importing twice added nothing
        assert opened.run_spec(first) == cs.read_run_archive(a).spec
    finally:
        opened.close()


def test_the_manifest_counts_and_hashes_what_the_archive_holds(archived):
    a, _, _, (first, _) = archived
    archive = cs.read_run_archive(a)
    manifest = archive.manifest
    assert (manifest["format"], manifest["schema_version"]) == ("convoscope-run-archive", 1)
    assert manifest["run"]["run_id"] == first == archive.run_id
    assert manifest["counts"]["final"] == manifest["counts"]["verdicts"] == 14
    assert manifest["counts"]["criteria"] == ["long"] and manifest["counts"]["items"] == 14
    assert set(manifest["members"]) == {"spec.json", "summary.json", "verdicts.jsonl"}
    assert archive.spec["criteria"] == ["long"] and archive.summary is not None
    values = {verdict.item_id: verdict.value for verdict in archive.verdicts()}
    assert values["i7"] == 7 and values == {v.item_id: v.value for v in cs.read_verdicts(a)}


def test_items_and_criteria_travel_in_the_archive(tmp_path):
    store = tmp_path / "runs.db"
    first, _ = _two_runs(store)
    items = tmp_path / "items.jsonl"
    rows = [json.dumps({"id": f"i{n}", "response": "word " * n}) for n in range(1, 15)]
    items.write_text("\n".join(rows) + "\n")
    criteria = tmp_path / "long.yaml"
    criteria.write_text("name: long\nquestion: Is it long?\ndefinition: Long answers.\n"
                        "scale: {kind: range, minimum: 0, maximum: 10}\n")
    out = _export(first, store, tmp_path / "run.cvs.zip",
                  "--items", str(items), "--criteria-file", str(criteria))
    archive = cs.read_run_archive(out)
    assert [item.id for item in archive.items()] == [f"i{n}" for n in range(1, 15)]
    assert archive.criteria_text() == criteria.read_text()
    assert {"items.jsonl", "criteria.yaml"} <= set(archive.manifest["members"])


def _rewrite(source, target, change):
    """Copy an archive member by member, passing each (name, bytes) through ``change``."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            new.writestr(info.filename, change(info.filename, old.read(info.filename)))
    return target


def _refused(archive, store):
    result = CliRunner().invoke(cli, ["import-run", str(archive), "--store", str(store)])
    assert result.exit_code == 2, result.output
    assert result.output.strip().count("\n") == 0, result.output  # one line
    assert not store.exists() or cs.Store(store).run_ids() == []
    return result.output


def test_an_edited_archive_is_refused_with_one_line_and_nothing_written(archived, tmp_path):
    a = archived[0]

    def seven_to_nine(name, data):
        return data.replace(b'"value":7', b'"value":9') if name == "verdicts.jsonl" else data

    edited = _rewrite(a, tmp_path / "edited.cvs.zip", seven_to_nine)
    assert b'"value":9' in zipfile.ZipFile(edited).read("verdicts.jsonl")
    message = _refused(edited, tmp_path / "target.db")
    assert "verdicts.jsonl" in message and "sha256" in message and "edited.cvs.zip" in message
    with pytest.raises(cs.ConvoscopeError, match="sha256"):
        cs.compare(str(edited), str(archived[1]))


def test_an_archive_of_a_newer_schema_is_refused(archived, tmp_path):
    def future(name, data):
        if name != "manifest.json":
            return data
        manifest = json.loads(data)
        manifest["schema_version"] = 2
        return json.dumps(manifest).encode()

    newer = _rewrite(archived[0], tmp_path / "newer.cvs.zip", future)
    message = _refused(newer, tmp_path / "target.db")
    assert "schema version 2" in message and "newer" in message


def test_exporting_a_run_that_is_not_there_names_the_store_and_the_run(tmp_path):
    store = tmp_path / "runs.db"
    _two_runs(store)
    result = CliRunner().invoke(cli, ["export-run", "nosuchrun", "--store", str(store),
                                      "--out", str(tmp_path / "x.cvs.zip")])
    assert result.exit_code == 2, result.output
    assert "runs.db" in result.output and "'nosuchrun'" in result.output
    assert result.output.strip().count("\n") == 0
    assert not list(tmp_path.glob("x.cvs.zip*"))
    missing = CliRunner().invoke(cli, ["export-run", "abc", "--store", str(tmp_path / "none.db"),
                                       "--out", str(tmp_path / "y.cvs.zip")])
    assert missing.exit_code == 2 and "none.db" in missing.output, missing.output


def test_report_and_metaeval_read_an_archive_as_they_read_a_verdict_file(archived, tmp_path):
    a = archived[0]
    people = tmp_path / "people.jsonl"
    rows = [{"item_id": f"i{n}", "criterion": "long", "rater": f"human:{who}", "value": min(10, n + shift)}
            for n in range(1, 15) for who, shift in (("ann", 0), ("bob", 1))]
    people.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = CliRunner().invoke(cli, ["report", str(a), str(people), "--out", str(tmp_path / "r.html")])
    assert report.exit_code == 0, report.output
    assert "words" in (tmp_path / "r.html").read_text(encoding="utf-8")
    metaeval = CliRunner().invoke(cli, ["metaeval", str(a), "--human", str(people)])
    assert metaeval.exit_code == 0, metaeval.output
    assert "python:words" in metaeval.output or "words" in metaeval.output
    assert [r.value for r in cs.read_ratings(a)] == [min(10, n) for n in range(1, 15)]


def test_a_panel_run_keeps_which_verdicts_are_final_through_export_and_import(tmp_path):
    items = [cs.Item(id=f"i{n}", response="word " * n) for n in range(1, 9)]

    @cs.python_judge(name="words")
    def words(item, criterion):
        return min(10, len(item.response.split()))

    @cs.python_judge(name="twice")
    def twice(item, criterion):
        return min(10, 2 * len(item.response.split()))

    store = tmp_path / "runs.db"
    run = cs.judge(items, [_criterion()], [words, twice], pool="mean", store=store, cache_path=None)
    out = _export(run.run_id, store, tmp_path / "panel.cvs.zip")
    archive = cs.read_run_archive(out)
    counts = archive.manifest["counts"]
    assert (counts["final"], counts["members"], counts["verdicts"]) == (8, 16, 24)
    finals = archive.verdicts()
    assert {verdict.rater for verdict in finals} == {verdict.rater for verdict in run.verdicts}
    assert {verdict.rater for verdict in archive.verdicts(members=True)} >= {"python:words", "python:twice"}
    target = tmp_path / "imported.db"
    CliRunner().invoke(cli, ["import-run", str(out), "--store", str(target)])
    opened = cs.Store(target)
    try:
        assert opened.verdicts(run.run_id, members=False) == finals
        assert opened.verdicts(run.run_id) == cs.Store(store).verdicts(run.run_id)
    finally:
        opened.close()


def test_an_archive_damaged_on_disk_is_refused_with_one_line(archived, tmp_path):
    damaged = tmp_path / "damaged.cvs.zip"
    data = bytearray(archived[0].read_bytes())
    with zipfile.ZipFile(archived[0]) as archive:
        info = archive.getinfo("verdicts.jsonl")
    header = data[info.header_offset:info.header_offset + 30]  # the local header gives its own lengths
    name_length, extra_length = (int.from_bytes(header[at:at + 2], "little") for at in (26, 28))
    start = info.header_offset + 30 + name_length + extra_length
    for offset in range(start + 10, start + 20):
        data[offset] ^= 0xFF
    damaged.write_bytes(bytes(data))
    message = _refused(damaged, tmp_path / "target.db")
    assert "verdicts.jsonl" in message and "damaged" in message


def test_a_run_id_already_in_the_store_with_another_spec_is_refused(tmp_path):
    import hashlib

    store = tmp_path / "runs.db"
    first, _ = _two_runs(store)
    out = _export(first, store, tmp_path / "a.cvs.zip")
    changed_spec = json.dumps({**cs.read_run_archive(out).spec, "judge": "someone else"}).encode()

    def other_spec(name, data):
        if name == "spec.json":
            return changed_spec
        if name == "manifest.json":  # a consistent archive of another run under the same id
            manifest = json.loads(data)
            manifest["members"]["spec.json"] = {"sha256": hashlib.sha256(changed_spec).hexdigest(),
                                                "bytes": len(changed_spec)}
            return json.dumps(manifest).encode()
        return data

    other = _rewrite(out, tmp_path / "other.cvs.zip", other_spec)
    before = cs.Store(store).run_spec(first)
    result = CliRunner().invoke(cli, ["import-run", str(other), "--store", str(store)])
    assert result.exit_code == 2 and "another spec" in result.output, result.output
    assert cs.Store(store).run_spec(first) == before
    fresh = CliRunner().invoke(cli, ["import-run", str(other), "--store", str(tmp_path / "fresh.db")])
    assert fresh.exit_code == 0, fresh.output


def test_a_campaigns_answers_stored_under_its_own_run_travel_too(tmp_path):
    """People's answers are stored in the campaign's own scope, as `campaign serve` writes them."""
    store = tmp_path / "campaign.db"
    opened = cs.Store(store)
    run_id = "campaign:demo"
    opened.start_run(run_id, {"name": "demo"})
    for n in range(5):
        opened.add(run_id, f"answer-{n}", cs.Verdict(item_id=f"i{n}", criterion="long",
                                                     rater=f"human:p{n % 2}", value=n))
    expected = opened.verdicts(run_id)
    opened.close()
    out = _export(run_id, store, tmp_path / "campaign.cvs.zip")
    assert cs.read_run_archive(out).verdicts() == expected
    target = tmp_path / "new.db"
    assert CliRunner().invoke(cli, ["import-run", str(out), "--store", str(target)]).exit_code == 0
    imported = cs.Store(target)
    try:
        assert imported.verdicts(run_id) == expected
        assert imported.done_keys(run_id) == {f"answer-{n}" for n in range(5)}
    finally:
        imported.close()


def test_an_items_file_that_is_not_the_runs_is_refused_and_no_archive_is_left(tmp_path):
    store = tmp_path / "runs.db"
    first, _ = _two_runs(store)
    items = tmp_path / "other.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{n}", "response": "x"}) + "\n" for n in range(1, 10)))
    result = CliRunner().invoke(cli, ["export-run", first, "--store", str(store), "--items", str(items),
                                      "--out", str(tmp_path / "run.cvs.zip")])
    assert result.exit_code == 2, result.output
    assert "other.jsonl" in result.output and "5 of the run's 14 items" in result.output
    assert not list(tmp_path.glob("run.cvs.zip*"))
