"""A renamed copy of an input costs only its new items (issue 39, observation 2).

A run is named by its judge, criteria and input path, so ``answers-v2.jsonl`` (a copy of
``answers.jsonl`` with more answers at its end) starts a new run. Its verdicts were always found
by their task keys, but every finished item was read, rendered and looked up again: about 0.17 ms
an item, 145 s before the first new request with a million done. Now a new run whose file starts
with the bytes of another run's done prefix, for the same judge and criteria, takes that run's
finished chunks as its own without reading them. Counted here: what is rendered (a spy on the
judge's ``request``), never time. Real ``convoscope judge`` commands against the canned proxy.
"""

import json
import shutil
import sqlite3

from click.testing import CliRunner
from short_rubric import CRITERIA
from test_resume_cost import Spies, _same, _write
from test_resume_cost import _judge as judge_args

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.store import Store

_register()
OTHER_CRITERIA = CRITERIA.replace("clarity", "plainness")


def _judge(tmp_path, base_url, items, out, criteria="criteria.yaml"):
    return judge_args(tmp_path, base_url, items=items, out=out, criteria=criteria)


def _records(tmp_path, name):
    return [json.loads(line) for line in (tmp_path / name).read_text().splitlines()]


def _verdicts_of(tmp_path, source):
    """The store's verdicts of the run over ``source``, as --out writes them."""
    store = Store(tmp_path / "store.db")
    try:
        (run_id,) = [run for run in store.run_ids()
                     if store.run_spec(run)["source"] == str((tmp_path / source).resolve())]
        return [json.loads(verdict.model_dump_json()) for verdict in store.verdicts(run_id)]
    finally:
        store.close()


def _first_run(tmp_path, base_url, count=20):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    _write(tmp_path / "items.jsonl", 0, count)
    first = CliRunner().invoke(cli, _judge(tmp_path, base_url, "items.jsonl", "out.jsonl"))
    assert first.exit_code == 0, first.output


def test_a_renamed_copy_with_new_items_renders_only_the_new_items(tmp_path, canned_proxy, monkeypatch):
    # Before: all 23 items were rendered again (the 20 finished ones found by their keys).
    _first_run(tmp_path, canned_proxy.base_url)
    shutil.copy(tmp_path / "items.jsonl", tmp_path / "renamed.jsonl")
    _write(tmp_path / "renamed.jsonl", 20, 23)
    spies = Spies(monkeypatch)
    second = CliRunner().invoke(cli, [*_judge(tmp_path, canned_proxy.base_url, "renamed.jsonl", "out2.jsonl"),
                                      "--summary-json", str(tmp_path / "summary.json")])
    assert second.exit_code == 0, second.output
    assert spies.rendered == ["i20", "i21", "i22"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["total_tasks"], summary["resumed"], summary["model_calls"]) == (23, 20, 3)
    written = _records(tmp_path, "out2.jsonl")
    assert sorted(record["item_id"] for record in written) == sorted(f"i{i}" for i in range(23))
    assert _same(written, _verdicts_of(tmp_path, "renamed.jsonl"))
    # and the renamed run is a run of its own: grown again, it skips its own prefix
    _write(tmp_path / "renamed.jsonl", 23, 24)
    spies.rendered.clear()
    third = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "renamed.jsonl", "out2.jsonl"))
    assert third.exit_code == 0, third.output
    assert spies.rendered == ["i22", "i23"]  # the last chunk, one item then, two now
    assert _same(_records(tmp_path, "out2.jsonl"), _verdicts_of(tmp_path, "renamed.jsonl"))


def test_a_renamed_copy_judged_on_other_criteria_takes_nothing_from_the_first_run(
        tmp_path, canned_proxy, monkeypatch):
    _first_run(tmp_path, canned_proxy.base_url, count=6)
    (tmp_path / "other.yaml").write_text(OTHER_CRITERIA)
    shutil.copy(tmp_path / "items.jsonl", tmp_path / "renamed.jsonl")
    spies = Spies(monkeypatch)
    second = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "renamed.jsonl", "out2.jsonl",
                                            criteria="other.yaml"))
    assert second.exit_code == 0, second.output
    assert sorted(spies.rendered) == sorted(f"i{i}" for i in range(6))
    assert {record["criterion"] for record in _records(tmp_path, "out2.jsonl")} == {"plainness"}


def test_a_renamed_copy_whose_first_answer_changed_is_read_whole(tmp_path, canned_proxy, monkeypatch):
    _first_run(tmp_path, canned_proxy.base_url, count=6)
    lines = (tmp_path / "items.jsonl").read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace("more trains", "fewer trains")
    (tmp_path / "renamed.jsonl").write_text("".join(lines))
    spies = Spies(monkeypatch)
    second = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "renamed.jsonl", "out2.jsonl"))
    assert second.exit_code == 0, second.output
    assert sorted(spies.rendered) == sorted(f"i{i}" for i in range(6))  # found by their keys, i0 judged
    written = _records(tmp_path, "out2.jsonl")
    assert len(written) == 6 and _same(written, _verdicts_of(tmp_path, "renamed.jsonl"))


def test_a_renamed_copy_repeating_an_id_of_the_taken_chunks_is_refused(tmp_path, canned_proxy):
    _first_run(tmp_path, canned_proxy.base_url, count=6)
    shutil.copy(tmp_path / "items.jsonl", tmp_path / "renamed.jsonl")
    with (tmp_path / "renamed.jsonl").open("a") as handle:
        handle.write(json.dumps({"id": "i1", "response": "Again."}) + "\n")
    second = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "renamed.jsonl", "out2.jsonl"))
    assert second.exit_code == 2 and "i1" in second.output, second.output


def test_the_taken_chunks_are_recorded_for_the_new_run(tmp_path, canned_proxy):
    _first_run(tmp_path, canned_proxy.base_url, count=6)
    shutil.copy(tmp_path / "items.jsonl", tmp_path / "renamed.jsonl")
    assert CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "renamed.jsonl",
                                          "out2.jsonl")).exit_code == 0
    with sqlite3.connect(tmp_path / "store.db") as connection:
        per_run = connection.execute("select run_id, count(*), sum(state = 'done') from run_chunks "
                                     "group by run_id").fetchall()
        tasks = connection.execute("select count(*) from run_tasks group by run_id").fetchall()
    assert [(count, done) for _, count, done in per_run] == [(3, 3), (3, 3)]
    assert [count for (count,) in tasks] == [6, 6]


def test_chunks_judged_again_in_the_first_run_meanwhile_leave_the_new_run_outstanding(
        tmp_path, canned_proxy, monkeypatch):
    """The new run records the taken chunks after its pass; should the first run have judged one
    of them again meanwhile, nothing is taken and the exit says work is outstanding (exit 3)."""
    import convoscope.store._chunks as chunks_module

    _first_run(tmp_path, canned_proxy.base_url, count=6)
    shutil.copy(tmp_path / "items.jsonl", tmp_path / "renamed.jsonl")
    _write(tmp_path / "renamed.jsonl", 6, 7)
    take = chunks_module.take_chunks

    def judged_again_first(engine, run_id, other, chunks):
        with sqlite3.connect(tmp_path / "store.db") as connection:
            connection.execute("update run_chunks set state = 'failed' where run_id = ? and chunk = 1",
                               (other,))
        return take(engine, run_id, other, chunks)

    monkeypatch.setattr(chunks_module, "take_chunks", judged_again_first)
    second = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "renamed.jsonl", "out2.jsonl"))
    assert second.exit_code == 3, second.output
    with sqlite3.connect(tmp_path / "store.db") as connection:
        per_run = dict(connection.execute(
            "select run_id, group_concat(chunk) from run_chunks group by run_id"))
    assert sorted(per_run.values()) == ["0,1,2", "3"]  # the three skipped are not the new run's yet
    monkeypatch.setattr(chunks_module, "take_chunks", take)
    third = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "renamed.jsonl", "out2.jsonl"))
    assert third.exit_code == 0, third.output
    assert _same(_records(tmp_path, "out2.jsonl"), _verdicts_of(tmp_path, "renamed.jsonl"))
