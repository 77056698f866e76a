"""``convoscope judge``: apply criteria to items with one judge or a panel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from convoscope.cli._common import fail_on, naming_encoding_flag
from convoscope.cli._progress import RunProgress
from convoscope.criteria import Criterion, select_criteria
from convoscope.items import (
    ColumnMap,
    ItemStream,
    RecordStream,
    check_output,
    read_items,
    with_reference_candidates,
)
from convoscope.judges import Verdict
from convoscope.runs import (
    BESIDE_STORE,
    DEFAULT_LEASE_S,
    DEFAULT_MAX_UNSCORED,
    EXIT_BELOW_GATE,
    EXIT_OUTSTANDING,
    OFFLINE_WARNING,
    GateRule,
    RunOptions,
    RunResult,
    gate_rules,
    is_embedded,
    judge_async,
    judge_specs,
    run_sync,
    sampled_stream,
)
from convoscope.runs._out import VerdictFile
from convoscope.runs._stop import Terminated, until_terminated
from convoscope.store._target import DEFAULT_STORE, new_sqlite_file

EXAMPLE = """
\b
Examples:
  convoscope judge items.jsonl --suite response-candidates --out verdicts.jsonl
  convoscope judge dialogues.jsonl --suite dialogue-issues --judge embedded \\
      --judge openai:qwen2.5-7b@http://127.0.0.1:8000/v1 --pool majority
  convoscope judge answers.csv --response-col answer --criterion survey/effort
  convoscope judge answers.csv --criterion survey/effort --judge openai:gpt-4o-mini \\
      --api-key-env api.openai.com=OPENAI_API_KEY --concurrency 32 --rpm 500 --timeout 30
  convoscope judge candidates.jsonl --suite response-candidates --reference-candidates --out verdicts.jsonl
  convoscope judge logs.jsonl --suite kpi --sample 500 --stratify-by language --seed 1 --out sample.jsonl
  convoscope judge qa.jsonl --suite kpi --kpi follow-up --kpi low-latency \\
      --judge embedded --judge embedded:gemma3-270m --pool max-vote --persona brand-ambassador
  convoscope judge logs.jsonl --suite kpi --judge openai:qwen2.5-7b@http://127.0.0.1:8000/v1 --workers 2
  convoscope judge logs.parquet --suite kpi --judge openai:qwen2.5-7b@http://10.0.0.5:8000/v1 \\
      --engine ray --ray-address 10.0.0.2:6379 --store postgresql://judge@10.0.0.2/runs
  convoscope judge answers.csv --response-col answer --criterion survey/effort \\
      --judge python:myrules:specifics --judge anthropic:claude-3-5-haiku-latest --pool mean
"""


@click.command("judge", epilog=EXAMPLE)
@click.argument("items_path", metavar="ITEMS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--suite", "suites", multiple=True, help="A built-in suite (or YAML path) to judge on.")
@click.option("--criterion", "criteria_refs", multiple=True,
              help="One criterion, 'name' or 'suite/name'. Repeatable.")
@click.option("--kpi", "kpis", multiple=True, metavar="NAME",
              help="Judge only this KPI of the given suites / files (default: the kpi suite). "
              "Repeatable.")
@click.option("--criteria-file", "criteria_files", multiple=True, type=click.Path(exists=True),
              help="Your own criteria in YAML. Repeatable.")
@click.option("--judge", "judges", multiple=True, default=("embedded",), show_default=True,
              help="A judge: 'embedded', 'embedded:NAME' (gemma3-270m), 'embedded:PATH' (a .gguf file), "
              "'openai:MODEL@BASE_URL' (any OpenAI-compatible server), 'anthropic:MODEL[@BASE_URL]', "
              "'gemini:MODEL', 'litellm:PROVIDER/MODEL[@API_BASE]' (extra providers), a prefix an "
              "installed package adds, or a judge written in Python: 'python:MODULE:NAME' or "
              "'python:ENTRY_POINT' (docs/python-judges.md). Repeat for a panel.")
@click.option("--mode", type=click.Choice(["auto", "chat", "completion"]), default="auto",
              show_default=True, help="chat = JSON answer; completion = next-token scoring "
              "(auto: completion for embedded models, chat otherwise).")
@click.option("--persona", "personas", multiple=True, default=(), metavar="NAME|NAME=TEXT",
              help="Judge from a point of view: a library persona (brand-ambassador, "
              "security-expert, safety-engineer, first-time-user, domain-expert, strict-rater) or your own "
              "NAME=TEXT. Several personas on one model form a panel.")
@click.option("--domain", help="The setting the conversations take place in, told to the judge "
              "(e.g. 'the in-car assistant of a car manufacturer'); overrides the suite's default.")
@click.option("--pool", type=click.Choice(["majority", "max-vote", "mean", "median"]), default="majority",
              show_default=True, help="How a panel pools its judges (max-vote is InCA's name for "
              "majority: the most frequent value wins, ties by --ties).")
@click.option("--ties", type=click.Choice(["low", "high", "unscored"]), default="unscored",
              show_default=True, help="Majority (max-vote) tie rule: unscored (reason 'tie'; with two "
              "judges every disagreement is a tie, and no side is taken), or broken to the lowest "
              "scale value (a binary KPI's 'not fulfilled') or the highest.")
@click.option("--quorum", type=int, default=1, show_default=True,
              help="Scored panel members needed for a pooled verdict.")
@click.option("--repeats", type=click.IntRange(min=1), default=1, show_default=True,
              help="Ask each judge N times (distinct seeds, sampled), pool the answers as a panel "
              "does, and report how far each judge agrees with itself.")
@click.option("--temperature", type=click.FloatRange(min=0), metavar="T",
              help="The judges' sampling temperature (default 0; 0.7 with --repeats).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the run's verdicts here (.jsonl, .csv or .parquet); checked before the run, "
              "written atomically.")
@click.option("--encoding", default="utf-8", show_default=True,
              help="Text encoding of a CSV / JSON items file, e.g. cp949 or latin-1.")
@click.option("--store", "store_target", default=DEFAULT_STORE, show_default=True,
              help="SQLite file or PostgreSQL URL where every verdict is kept as it is made.")
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False), default=BESIDE_STORE,
              show_default=True, envvar="CONVOSCOPE_CACHE", show_envvar=True,
              help="Response cache file (beside-store: next to a SQLite store).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option("--one-call", is_flag=True, help="Ask every criterion in a single chat call per item "
              "(e.g. all dialogue-issue labels at once) instead of one call per criterion; the "
              "rater is then model:NAME[one-call].")
@click.option("--max-tokens", type=int, default=400, show_default=True,
              help="Longest answer a chat-mode judge may write (per criterion with --one-call).")
@click.option("--concurrency", type=int, default=8, show_default=True,
              help="Judgements in flight at once; an HTTP endpoint's in-flight limit follows it.")
@click.option("--retry-unscored", is_flag=True, help="Also judge again the tasks whose verdict is "
              "a parse_failure, refusal or judge_error (model_error verdicts are always retried).")
@click.option("--max-unscored", type=click.FloatRange(0, 1), default=DEFAULT_MAX_UNSCORED,
              show_default=True, help="Exit 4 when more than this share of the run's verdicts is "
              "unscored (idk answers and panel ties excepted).")
@click.option("--lease", "lease_s", type=click.FloatRange(min=1), default=DEFAULT_LEASE_S,
              show_default=True, metavar="SECONDS", help="Several processes may share a run: a "
              "claimed task is reserved this long without a heartbeat (a dead worker's tasks "
              "are free again after it).")
@click.option("--timeout", type=float, metavar="SECONDS",
              help="HTTP judges: longest wait for one attempt (default 60); e.g. --timeout 30.")
@click.option("--deadline", type=float, metavar="SECONDS",
              help="HTTP judges: longest time one call may take, retries and waits included (default 180).")
@click.option("--max-retries", type=int, metavar="N",
              help="HTTP judges: attempts after the first on 429, 5xx, timeouts, dropped connections and "
              "malformed answers (default 3).")
@click.option("--rpm", type=float, help="HTTP judges: requests per minute per endpoint, e.g. --rpm 500.")
@click.option("--tpm", type=float, help="HTTP judges: tokens per minute per endpoint (prompt estimate "
              "plus --max-tokens), e.g. --tpm 200000.")
@click.option("--api-key-env", "api_key_env", multiple=True, default=(), metavar="VAR|HOST=VAR",
              help="The environment variable holding an endpoint's API key: VAR for every endpoint of "
              "the run, HOST=VAR for one host, e.g. --api-key-env api.openai.com=OPENAI_API_KEY. "
              "Without it OPENAI_API_KEY goes to api.openai.com (or OPENAI_BASE_URL) only. Repeatable.")
@click.option("--allow-insecure-key", is_flag=True,
              help="Allow sending an API key over plain http:// to a host other than this machine.")
@click.option("--context-length", type=int, metavar="TOKENS",
              help="HTTP judges: the server's context size, when it does not report it; over-long "
              "prompts are then that item's model_error before any call.")
@click.option("--batch", type=click.Choice(["openai", "anthropic"]),
              help="Send what the cache cannot answer through the provider's batch API (half price, "
              "answers within 24 h): this run submits and exits 3; run the same command later to collect.")
@click.option("--batch-max-requests", type=click.IntRange(min=1), metavar="N",
              help="With --batch: at most N requests per batch (default: the provider's limit, "
              "OpenAI 50,000, Anthropic 100,000), for a service that accepts fewer.")
@click.option("--batch-max-bytes", type=click.IntRange(min=1), metavar="BYTES",
              help="With --batch: at most BYTES per batch file (default: OpenAI 200 MB, Anthropic 256 MB).")
@click.option("--fail-under", "gates", multiple=True, metavar="CRITERION=VALUE|CRITERION:LABEL=SHARE",
              help="A release gate: exit 5 when the mean score (or the share of a label) is below it, "
              "e.g. --fail-under overall=3.5 --fail-under follow-up:yes=0.9. Repeatable.")
@click.option("--summary-json", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Also write the run's summary and exit status as JSON to FILE, for cron jobs and "
              "orchestrators (Airflow): every count of the summary table, by name.")
@click.option("--otel", is_flag=True, help="Put every model call in an OpenTelemetry span (extra "
              "otel; spans go to the tracer provider your environment configures, e.g. through "
              "opentelemetry-instrument).")
@click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N items.")
@click.option("--sample", "sample_size", type=click.IntRange(min=1), metavar="N",
              help="Judge a reproducible random sample of N items (see --stratify-by, --seed).")
@click.option("--stratify-by", metavar="FIELD", help="Share the sample in proportion to the items' "
              "FIELD: language, system, question or meta.KEY.")
@click.option("--seed", "sample_seed", type=int, default=0, show_default=True,
              help="Which sample --sample draws (the same seed, the same items).")
@click.option("--chunk-size", type=click.IntRange(min=1), default=256, show_default=True,
              help="Items read, planned and claimed together. Workers sharing a run claim chunks.")
@click.option("--workers", type=click.IntRange(min=1), metavar="N", help="Processes sharing the run "
              "(default 1): on this machine they claim chunks through the store; with --engine ray, "
              "Ray workers (default: as many as the cluster's CPUs allow). A dead worker's work is "
              "taken over; see docs/runs.md.")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="ray: spread the run over a Ray cluster (extra ray): items read as a Ray Dataset, "
              "one judge per Ray worker, every verdict to the shared --store.")
@click.option("--ray-address", metavar="ADDR", help="With --engine ray: the cluster (HOST:PORT, "
              "ray://HOST:PORT or auto); default RAY_ADDRESS, else a Ray instance on this machine.")
@click.option("--progress-every", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              metavar="SECONDS", help="When not on a terminal (CI logs, nohup, | tee): one progress "
              "line this often.")
@click.option("--reference-candidates", is_flag=True,
              help="Judge each context's reference turn as one more candidate (system "
              "'reference', id '<context>:reference'), as the response-candidate protocol does.")
@click.option("--id-col", default="id", show_default=True, help="CSV/Parquet column of item ids.")
@click.option("--question-col", default="question", show_default=True)
@click.option("--context-col", default="context", show_default=True)
@click.option("--response-col", default="response", show_default=True)
@click.option("--reference-col", default="reference", show_default=True)
@click.option("--language-col", default="language", show_default=True)
@click.option("--system-col", default="system", show_default=True)
def judge_command(items_path: Path, suites: tuple[str, ...], criteria_refs: tuple[str, ...],
                  kpis: tuple[str, ...], criteria_files: tuple[str, ...], judges: tuple[str, ...],
                  domain: str | None, out: Path | None, encoding: str, store_target: str, no_cache: bool,
                  max_unscored: float, gates: tuple[str, ...], limit: int | None,
                  sample_size: int | None, stratify_by: str | None, sample_seed: int, chunk_size: int,
                  progress_every: float, reference_candidates: bool, summary_json: Path | None = None,
                  **settings: Any) -> None:
    """Judge ITEMS (.jsonl, .csv, .tsv, .parquet) on criteria and keep every verdict.

    Every verdict is written to the store as it is produced. Run the same command again after
    an interruption and it resumes where it stopped, without repeating finished work; tasks whose
    verdict is a model_error (an endpoint that failed) are tried again. Several processes (on
    one or many machines sharing a PostgreSQL --store) may run the same command at once: each
    task is claimed by one of them.

    \b
    Exit status:
      0  every task has a verdict (scored, or unscored for a reason that is an answer)
      2  bad input or settings (one line names the file, line and field)
      3  work outstanding: some verdict is still a model_error; run the same command again
      4  more than --max-unscored of the verdicts are unscored (parse failures, refusals, ...)
      5  a --fail-under gate is not met
    """
    console = Console(stderr=True)
    with fail_on(console):
        mapping = {key.removesuffix("_col"): settings.pop(key) for key in list(settings)
                   if key.endswith("_col")}
        options = RunOptions(**settings)  # every other option is a run setting, as judge() takes it
        if no_cache:
            options = replace(options, cache_path=None)
        with naming_encoding_flag():
            stream = _item_stream(items_path, ColumnMap(**mapping), encoding, limit, chunk_size,
                                  reference_candidates)
            stream.check_start()
            if sample_size is not None:
                stream = _sampled(console, stream, sample_size, stratify_by, sample_seed)
        criteria = select_criteria(suites=suites, names=criteria_refs, files=criteria_files, only=kpis)
        if domain:
            criteria = [criterion.model_copy(update={"domain": domain}) for criterion in criteria]
        rules = gate_rules(gates, criteria)
        _check_first_chunk(stream, criteria)
        specs = judge_specs(judges, mode=options.mode, personas=options.personas)
        for path in (out, summary_json):  # checked first, created last: a store that fails leaves no file
            if path is not None:
                check_output(path, inputs=(items_path, *criteria_files, store_target))
        store, location = _store(store_target)
        writer = _verdict_file(out, criteria, every=bool(rules))
        console.print(f"Judging {items_path} on {len(criteria)} criteria; "
                      f"store: [bold]{escape(location)}[/bold]")
        if any(is_embedded(spec.model) for spec in specs):
            console.print(f"[yellow]{OFFLINE_WARNING}[/yellow]")
        with naming_encoding_flag():
            result = _run(console, stream, criteria, specs, store, writer, rules, progress_every, options,
                          summary_json)
        if out is not None:
            console.print(f"Wrote {writer.count} verdicts to {escape(str(out))}")
        _print_summary(console, result)
        if isinstance(options.batch, str) and result.summary.cost:  # a provider batch, not files
            cost = result.summary.cost
            console.print(f"Batch answers are billed at half the list price: {cost:.4f} "
                          f"instead of {2 * cost:.4f}.")
        gate_results = result.gates
    for gate in gate_results:
        observed = "nothing scored" if gate.observed is None else f"{gate.observed:.3f}"
        mark = "[green]pass[/green]" if gate.passed else "[red]FAIL[/red]"
        console.print(f"gate {escape(str(gate.rule))}: {observed} over {gate.n} verdicts — {mark}")
    code = result.exit_code(max_unscored)
    if summary_json is not None:
        _write_summary(summary_json, code, result.summary.as_dict(), gate_results)
    if code == EXIT_BELOW_GATE:
        console.print("[red]Below a --fail-under gate[/red] (exit 5).")
        raise SystemExit(EXIT_BELOW_GATE)
    if code:
        console.print(_EXIT_NOTES[code].format(share=result.summary.unscored_fraction, limit=max_unscored))
        raise SystemExit(code)


def _store(target: str) -> tuple[Any, str]:
    """The store, opened here so that one that cannot be used is refused before anything is
    written, and where it is, as shown. A new SQLite file holds nothing to check: its path is
    handed on, and the run decides when to set it up (one process sends its first requests
    before, runs._head; workers, Ray and batches set it up first)."""
    fresh = new_sqlite_file(target)
    if fresh is not None:
        return target, str(fresh)
    from convoscope.store import Store

    store = Store(target)
    return store, store.location


def _run(console: Console, stream: ItemStream, criteria: list[Criterion], specs: list[Any], store: Any,
         writer: VerdictFile, rules: list[GateRule], every: float, options: RunOptions,
         summary_json: Path | None) -> RunResult:
    """The run, streaming: verdicts go to --out and the gates as they are committed."""
    with RunProgress(console, every=every, count_total=_total(stream, criteria)) as progress:
        def seen(finals: list[Verdict], _members: list[Verdict]) -> None:
            progress.unscored.update(v.unscored_reason for v in finals if v.unscored_reason)

        writer.also = seen
        on_verdicts = writer

        try:
            settings = {name: value for name, value in vars(options).items()
                        if name not in ("mode", "personas")}  # already in the specs
            return run_sync(until_terminated(judge_async(
                stream, criteria, specs, store=store, on_progress=progress.advance,
                on_verdicts=on_verdicts, collect=False, gates=rules, **settings)))
        except Terminated:
            if summary_json is not None:
                _write_summary(summary_json, EXIT_OUTSTANDING, {"stopped": "SIGTERM"}, [])
            console.print("[yellow]Stopped (SIGTERM).[/yellow] Every verdict made so far is in the "
                          "store (and in --out); run the same command again to resume (exit 3).")
            raise SystemExit(EXIT_OUTSTANDING) from None
        finally:
            writer.close()


def _write_summary(path: Path, code: int, summary: dict[str, Any], gates: Sequence[Any]) -> None:
    """The summary as JSON, replaced whole (a reader never sees half a file)."""
    import json
    import os

    record = {"exit_status": code, **summary,
              "gates": [{"rule": str(gate.rule), "observed": gate.observed, "n": gate.n,
                         "passed": gate.passed} for gate in gates]}
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(record, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(partial, path)


def _item_stream(path: Path, columns: ColumnMap, encoding: str, limit: int | None, chunk_size: int,
                 reference_candidates: bool) -> ItemStream:
    """The items, read lazily; with reference candidates, read whole (they group by context)."""
    if reference_candidates:
        items = read_items(path, columns=columns, encoding=encoding)[: limit or None]
        return ItemStream(with_reference_candidates(items), chunk_size=chunk_size)
    return ItemStream(path, columns=columns, encoding=encoding, limit=limit, chunk_size=chunk_size)


def _check_first_chunk(stream: ItemStream, criteria: list[Criterion]) -> None:
    """Computed criteria (latency, ...) on the first chunk, before the store or any model is
    touched: a bad timestamp there is one line naming file, line and field. Later chunks are
    checked as the run reaches them."""
    from convoscope.metrics import check_metric_inputs

    if all(criterion.judged_by_model for criterion in criteria):
        return
    first = next(iter(stream.chunks()), None)
    if first is not None:
        check_metric_inputs(first.items(), criteria, source=stream.name, start=first.start)


def _sampled(console: Console, stream: ItemStream, size: int, stratify_by: str | None,
             seed: int) -> ItemStream:
    chosen = sampled_stream(stream, size, stratify_by=stratify_by, seed=seed)
    how = f", stratified by {stratify_by}" if stratify_by else ""
    console.print(f"Sample: {chosen.count()} items{how}, seed {seed}.", markup=False, highlight=False)
    return chosen


def _verdict_file(out: Path | None, criteria: list[Criterion], *, every: bool) -> VerdictFile:
    """--out (opened when the run starts, before any model call; appended to when it already holds
    the run's finished chunks); value is text when a scale has labels. ``every``: the gates need
    every verdict of the run, those finished before included."""
    numeric = all(criterion.scale.is_numeric() for criterion in criteria)

    def opener(append: bool) -> RecordStream:
        return RecordStream(out, fields=list(Verdict.model_fields), model=Verdict,  # type: ignore[arg-type]
                            number_columns=("value",) if numeric else (),
                            text_columns=() if numeric else ("value",), append=append)

    return VerdictFile(out, opener, every=every)


def _total(stream: ItemStream, criteria: list[Criterion]) -> Any:
    def count() -> int | None:
        items = stream.count()
        return None if items is None else items * len(criteria)

    return count


_EXIT_NOTES = {
    3: "[yellow]Work outstanding:[/yellow] some tasks still have a model_error verdict (exit 3). "
       "Run the same command again to retry exactly those.",
    4: "[yellow]Too many unscored verdicts:[/yellow] {share:.1%} of the run is unscored, more than "
       "--max-unscored {limit:g} (exit 4).",
}


def _print_summary(console: Console, result: RunResult) -> None:
    from rich.table import Table  # once the run is over, not before its first request (issue 39)
    from rich.text import Text

    summary = result.summary
    table = Table(title=f"Run {summary.run_id}", show_header=False)
    rows: list[tuple[str, object]] = [
        ("tasks", summary.total_tasks), ("verdicts (this run)", summary.verdicts),
        ("scored", summary.scored),
        *((f"unscored: {reason}", count) for reason, count in sorted(summary.unscored.items())),
        ("resumed (already done)", summary.resumed), ("retried", summary.retried),
    ]
    if summary.done_elsewhere:
        rows.append(("done by other workers", summary.done_elsewhere))
    rows += [(f"still unscored: {reason}", count) for reason, count in sorted(summary.outstanding.items())]
    for rater, tally in sorted(summary.members.items()):
        counts = ", ".join(f"{name} {count}" for name, count in sorted(tally.items()))
        rows.append((f"member {rater}", counts))
    rows += [
        ("not applicable", summary.not_applicable),
        ("model calls", summary.model_calls), ("failed calls", summary.failed_calls),
        *((("deferred to a batch", summary.deferred),) if summary.deferred else ()),
        ("cache hits", summary.cache_hits),
        ("prompt tokens", summary.prompt_tokens), ("completion tokens", summary.completion_tokens),
        ("wall time", f"{summary.wall_time_s:.1f} s"), ("store", summary.store),
    ]
    if summary.cost:
        rows.append(("cost", f"{summary.cost:.4f}"))
    for found in summary.self_consistency:
        alpha = "–" if found["alpha"] is None else f"{found['alpha']:.3f}"
        rows.append((f"self-consistency {found['judge']} on {found['criterion']}",
                     f"pairs of repeats agreeing {found.get('pairwise', float('nan')):.3f}, α {alpha} "
                     f"({found['repeats']} repeats, {found['items']} items)"))
    rows += [("route", route) for route in summary.routes]
    rows += [("note", note) for note in summary.notes]
    for name, value in rows:
        table.add_row(Text(name), Text(str(value)))  # rater names hold brackets: never markup
    Console().print(table)


COMMANDS = [judge_command]
