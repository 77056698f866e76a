"""``convoscope batch``: the batch ledger in the store — where provider batches stand, cancel
them, clean up after them — and batch files for one's own cluster (export, then import)."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from convoscope.cli._common import fail_on
from convoscope.cli._judge import judge_command
from convoscope.store import DEFAULT_STORE

_STORE = click.option("--store", "store_target", default=DEFAULT_STORE, show_default=True,
                      help="SQLite file or PostgreSQL URL whose batch ledger to read.")
_KEYS = [click.option("--api-key-env", "api_key_env", multiple=True, metavar="VAR|HOST=VAR",
                      help="The environment variable holding a provider's API key (as for judge)."),
         click.option("--allow-insecure-key", is_flag=True,
                      help="Allow sending an API key over plain http:// to another host.")]


def _key_options(command: Any) -> Any:
    for option in reversed(_KEYS):
        command = option(command)
    return command


@click.group("batch")
def batch_group() -> None:
    """Provider batches and batch files, kept in the store's batch ledger.

    \b
    Examples:
      convoscope batch status --store run.db
      convoscope batch cancel --all --store run.db
      convoscope batch export items.jsonl --suite kpi --judge openai:qwen@http://gpu:8000/v1 --to batches/
    """


@batch_group.command("status")
@_STORE
@click.option("--all", "include_collected", is_flag=True, help="Also list the batches already collected.")
@click.option("--no-refresh", is_flag=True, help="Show the ledger as it is; do not ask the providers.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per batch on stdout, every "
              "field of the ledger, for cron jobs and orchestrators (no table, never cut to the terminal).")
@_key_options
def status_command(store_target: str, include_collected: bool, no_refresh: bool, api_key_env: tuple[str, ...],
                   allow_insecure_key: bool, as_json: bool = False) -> None:
    """Every open batch: its state at the provider, its requests, its files.

    \b
    Example:
      convoscope batch status --store run.db --api-key-env api.openai.com=OPENAI_API_KEY
    """
    from convoscope.batch._admin import batch_status

    console = Console()
    with fail_on(console), _ledger(store_target) as ledger:
        jobs = _run(batch_status(ledger, refresh_open=not no_refresh, include_collected=include_collected,
                                 keys=_keys(api_key_env, allow_insecure_key)))
        if as_json:
            _print_json(jobs)
        else:
            _print_jobs(console, ledger, jobs)


@batch_group.command("cancel")
@click.argument("job_ids", nargs=-1, metavar="[JOB]...")
@click.option("--all", "cancel_all", is_flag=True, help="Cancel every open batch.")
@_STORE
@_key_options
def cancel_command(job_ids: tuple[str, ...], cancel_all: bool, store_target: str,
                   api_key_env: tuple[str, ...], allow_insecure_key: bool) -> None:
    """Cancel open batches (by job id, or --all). What a batch finished is still collected by
    the next run; an exported file's requests go into the next export.

    \b
    Example:
      convoscope batch cancel cb-4f2a9c --store run.db
      convoscope batch cancel --all --store run.db
    """
    from convoscope.batch._admin import cancel_batches

    console = Console()
    with fail_on(console):
        if not job_ids and not cancel_all:
            raise click.UsageError("name the batch jobs to cancel, or give --all")
        with _ledger(store_target) as ledger:
            jobs = _run(cancel_batches(ledger, job_ids, keys=_keys(api_key_env, allow_insecure_key)))
            _print_jobs(console, ledger, jobs)
            console.print(f"Cancel asked for {len(jobs)} batch job(s).")


@batch_group.command("cleanup")
@_STORE
@click.option("--older-than", "older_than_days", type=click.FloatRange(min=0), metavar="DAYS",
              help="Also drop collected batches older than this from the ledger (their answers stay).")
@_key_options
def cleanup_command(store_target: str, older_than_days: float | None, api_key_env: tuple[str, ...],
                    allow_insecure_key: bool) -> None:
    """Delete the files batches left at the provider, settle interrupted submissions, and drop
    old collected batches from the ledger.

    \b
    Example:
      convoscope batch cleanup --store run.db --older-than 30
    """
    from convoscope.batch._admin import clean_up_batches

    console = Console()
    with fail_on(console), _ledger(store_target) as ledger:
        done = _run(clean_up_batches(ledger, keys=_keys(api_key_env, allow_insecure_key),
                                     forget_older_than_s=None if older_than_days is None
                                     else older_than_days * 86400))
        console.print(f"Deleted the files of {done.files_deleted} batch(es); settled {done.recovered} "
                      f"interrupted submission(s); dropped {done.forgotten} old batch(es) from the ledger.")


# -- export / import: the judge's own options, batch files instead of a provider ---------------

_EXPORT_EXAMPLE = """
\b
Example:
  convoscope batch export items.jsonl --criterion survey/effort \\
      --judge openai:Qwen2.5-7B-Instruct@http://gpu-node:8000/v1 --store run.db --to batches/
  python -m vllm.entrypoints.openai.run_batch -i batches/cb-….jsonl -o results/cb-….jsonl \\
      --model Qwen/Qwen2.5-7B-Instruct --served-model-name Qwen2.5-7B-Instruct
"""
_IMPORT_EXAMPLE = """
\b
Example:
  convoscope batch import items.jsonl --criterion survey/effort \\
      --judge openai:Qwen2.5-7B-Instruct@http://gpu-node:8000/v1 --store run.db --results results/ \\
      --out verdicts.jsonl
"""


def _export(to: Path, response_format: str, **options: Any) -> None:
    from convoscope.batch._model import BatchFiles

    started = time.time()
    code: Any = 0
    try:
        judge_command.callback(**options, batch=BatchFiles(to, response_format))  # type: ignore[misc]
    except SystemExit as stop:
        code = stop.code
    if code in (0, 3, 4, 5):
        console = Console(stderr=True)
        with _ledger(options["store_target"]) as ledger:
            jobs = [job for job in ledger.jobs(provider="files") if job.created_at >= started]
        for job in jobs:
            console.print(f"  {escape(str(job.input_file_id))}: {job.requests} requests ({job.endpoint})")
        console.print(f"Exported {sum(job.requests for job in jobs)} requests in {len(jobs)} file(s) to "
                      f"{escape(str(to))}. Their tasks stay outstanding until the results come back: run "
                      "the files (e.g. vLLM's run_batch), then: convoscope batch import … --results DIR")
    raise SystemExit(code)


def _import(results: tuple[str, ...], **options: Any) -> None:
    from convoscope.batch._admin import import_models, import_results
    from convoscope.batch._model import BatchFiles

    console = Console(stderr=True)
    with fail_on(console), _ledger(options["store_target"]) as ledger:
        models = import_models(options["judges"], ledger)

        async def read() -> Any:
            try:
                return await import_results(results, models, ledger)
            finally:
                for model in models:
                    await model.aclose()

        done = _run(read())
        console.print(f"Imported {done.lines} results from {done.files} file(s): {done.already} already "
                      f"imported; {done.answered} answered and {done.failed} failed in finished files.")
    judge_command.callback(**options, batch=BatchFiles(None))  # type: ignore[misc]


def _judging(name: str, callback: Any, extra: list[click.Parameter], doc: str, example: str) -> click.Command:
    """A command taking every option of ``convoscope judge`` (the same run) plus its own."""
    params = [param for param in judge_command.params if param.name != "batch"]
    return click.Command(name, callback=callback, params=[*params, *extra], help=doc, epilog=example)


export_command = _judging("export", _export, [
    click.Option(["--to"], type=click.Path(file_okay=False, path_type=Path), required=True,
                 help="Folder for the batch files (one per endpoint and at most 50,000 requests / 200 MB)."),
    click.Option(["--response-format"], type=click.Choice(["json_schema", "json_object", "none"]),
                 default="json_schema", show_default=True,
                 help="How chat requests ask for structured output: json_schema (OpenAI's form, which vLLM "
                 "reads), json_object with the schema beside it (llama.cpp), or none.")],
    """Write the requests the run still needs as OpenAI-batch JSONL files, for your own cluster.

    The same options as judge (the same run, the same store). Each request is recorded in the
    store's batch ledger, so exporting again writes only new work; answer the files with any
    OpenAI-batch runner (vLLM's run_batch reads /v1/chat/completions files) and import them.""",
    _EXPORT_EXAMPLE)
import_command = _judging("import", _import, [
    click.Option(["--results"], multiple=True, required=True, metavar="FILE|DIR",
                 help="A result file (OpenAI-batch output, as vLLM's run_batch writes it) or a folder of "
                 ".jsonl result files. Repeatable.")],
    """Read batch result files into the store and judge with them: the same run as judge.

    The same options as judge (and export). Each request's answer is kept once, so importing a
    file again changes nothing; requests whose result is missing or an error stay outstanding
    (exit 3) and go into the next export.""",
    _IMPORT_EXAMPLE)
batch_group.add_command(export_command)
batch_group.add_command(import_command)


# -- helpers ----------------------------------------------------------------------------------

class _ledger:  # noqa: N801 (a context manager used like a function)
    """The batch ledger of an existing store, closed on leaving (a missing store is an error,
    never a new empty one: every batch command reads a ledger that a run wrote)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __enter__(self) -> Any:
        from convoscope.store import Store
        from convoscope.store._batches import BatchLedger

        self.store = Store(self.target, create=False)
        return BatchLedger(self.store.engine)

    def __exit__(self, *_exc: object) -> None:
        self.store.close()


def _keys(api_key_env: tuple[str, ...], allow_insecure: bool) -> Any:
    from convoscope.batch._admin import KeyOptions
    from convoscope.models import endpoint_options

    options = endpoint_options(api_key_env=api_key_env)
    return KeyOptions(api_key_env=options.get("api_key_env"), allow_insecure=allow_insecure)


def _run(work: Any) -> Any:
    from convoscope.runs import run_sync

    return run_sync(work)


def _print_jobs(console: Console, ledger: Any, jobs: list[Any]) -> None:
    if not jobs:
        console.print("No batches in the ledger." if not ledger.jobs() else "No open batches (--all lists "
                      "the collected ones too).")
        return
    table = Table("job", "provider", "model", "endpoint", "batch", "state", "requests", "answered", "failed",
                  "submitted", "updated", "note")
    for job in jobs:
        table.add_row(job.job_id, job.provider, escape(job.model), job.endpoint, escape(job.remote_id or "—"),
                      f"{job.state} ({job.provider_status})" if job.provider_status else job.state,
                      str(job.requests), str(job.answered), str(job.failed), _when(job.submitted_at),
                      _when(job.updated_at), escape(job.detail or ""))
    console.print(table)


def _print_json(jobs: list[Any]) -> None:
    """JSON lines on stdout, written as they are (no console markup, no wrapping)."""
    import dataclasses
    import json
    import sys

    for job in jobs:
        sys.stdout.write(json.dumps(dataclasses.asdict(job), ensure_ascii=False, sort_keys=True) + "\n")


def _when(stamp: float | None) -> str:
    return "—" if stamp is None else datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


COMMANDS = [batch_group]
