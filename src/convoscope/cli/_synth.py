"""``convoscope synth``: simulated multilingual dialogues and balanced benchmarks (seed 001)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from convoscope.cli._common import fail_on

GROUP_EXAMPLE = """
\b
Example (offline, a few minutes on two cores; for trying the pipeline):
  convoscope synth contexts --n 2 --languages en,ko --out contexts.jsonl
  convoscope synth dialogues contexts.jsonl --user embedded --judge embedded --chatbot embedded \\
      --max-turns 4 --max-tokens 48 --out dialogues.jsonl
  convoscope synth stats dialogues.jsonl dialogues.filtered.jsonl
\b
With capable models, then judged and curated:
  convoscope synth dialogues contexts.jsonl --user openai:gpt-4o-mini \\
      --judge openai:gemini-2.0-flash@http://127.0.0.1:4000/v1 \\
      --chatbot llama=openai:llama3.1-8b@http://127.0.0.1:8000/v1 --out dialogues.jsonl
  convoscope judge dialogues.jsonl --suite dialogue-issues --out verdicts.jsonl
  convoscope synth curate dialogues.jsonl --verdicts verdicts.jsonl --per-language 100 --out benchmark.jsonl
"""


@click.group("synth", epilog=GROUP_EXAMPLE)
def synth_group() -> None:
    """Simulate user-chatbot dialogues in many languages and curate balanced benchmarks."""


CONTEXTS_EXAMPLE = """
\b
Examples:
  convoscope synth contexts --n 40 --languages en,pt,ko --out contexts.jsonl
  convoscope synth contexts --n 10 --languages de --scenes my_scenes.jsonl --seed 7 --out ctx.jsonl
"""


@synth_group.command("contexts", epilog=CONTEXTS_EXAMPLE)
@click.option("--n", "count", type=int, default=40, show_default=True,
              help="Scene / persona / affect draws; each is used once per language.")
@click.option("--languages", default="en", show_default=True, help="Comma-separated ISO 639-1 codes.")
@click.option("--scenes", "scenes_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Your scenes, JSONL: {\"id\", \"text\", \"affect\" (optional)} a line.")
@click.option("--personas", "personas_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Your personas, JSONL: {\"id\", \"text\"} a line.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed: same seed, same contexts.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
def contexts_command(count: int, languages: str, scenes_path: Path | None, personas_path: Path | None,
                     seed: int, out: Path) -> None:
    """Sample seed contexts: scene, persona, affective state, gender and language / country.

    Built-in scenes and personas are used unless you give your own. A scene that names a feeling
    keeps it; otherwise an affective state is drawn evenly from the four circumplex quadrants.
    """
    from convoscope.items import write_jsonl
    from convoscope.synth import read_personas, read_scenes, sample_contexts

    console = Console(stderr=True)
    with fail_on(console):
        codes = [code.strip() for code in languages.split(",") if code.strip()]
        contexts = sample_contexts(count, codes, seed=seed,
                                   scenes=read_scenes(scenes_path) if scenes_path else None,
                                   personas=read_personas(personas_path) if personas_path else None)
        console.print(f"Wrote {write_jsonl(contexts, out)} contexts to {out}")


DIALOGUES_EXAMPLE = """
\b
Examples:
  convoscope synth dialogues contexts.jsonl --user embedded --judge embedded --chatbot embedded \\
      --out dialogues.jsonl
  convoscope synth dialogues contexts.jsonl --user gpt=openai:gpt-4o-mini \\
      --judge openai:gemini-2.0-flash@http://127.0.0.1:4000/v1 \\
      --chatbot llama=openai:llama3.1-8b@http://127.0.0.1:8000/v1 --chatbot embedded --out dialogues.jsonl
"""


@synth_group.command("dialogues", epilog=DIALOGUES_EXAMPLE)
@click.argument("contexts_path", metavar="CONTEXTS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--user", "users", multiple=True, default=("embedded",), show_default=True,
              help="User model spec, optionally NAME=SPEC. Repeatable.")
@click.option("--judge", default="embedded", show_default=True,
              help="Model that checks every user turn, or 'none' (rule checks only, no role filter).")
@click.option("--chatbot", "chatbots", multiple=True, default=("embedded",), show_default=True,
              help="Chatbot model spec, optionally NAME=SPEC. Repeatable.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Dialogues that pass the filters (items JSONL, appended as they finish).")
@click.option("--filtered", "filtered_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Where filtered dialogues go, with their reasons (default: OUT.filtered.jsonl).")
@click.option("--max-turns", type=int, default=10, show_default=True, help="Utterances per dialogue.")
@click.option("--first-turn-attempts", type=int, default=10, show_default=True)
@click.option("--later-turn-attempts", type=int, default=5, show_default=True)
@click.option("--max-tokens", type=int, default=512, show_default=True,
              help="Longest user or chatbot message, in tokens.")
@click.option("--opening-max-tokens", type=int, default=64, show_default=True,
              help="Longest opening message, in tokens (one or two sentences).")
@click.option("--opening-temperature", type=float, default=1.5, show_default=True,
              help="Sampling temperature of the opening message (seed 001: 1.5; lower for small models).")
@click.option("--judge-mode", type=click.Choice(["auto", "chat", "completion"]), default="auto",
              show_default=True, help="How the judge answers (auto: completion for embedded models).")
@click.option("--no-role-check", is_flag=True, help="Skip the role-reversal filter.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--concurrency", type=int, default=4, show_default=True, help="Dialogues in flight.")
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False), envvar="CONVOSCOPE_CACHE",
              show_envvar=True,
              help="Response cache (default: OUT with .cache.db), so a resumed run repeats no call.")
@click.option("--no-cache", is_flag=True)
@click.option("--limit", type=int, help="Use only the first N contexts.")
@click.option("--embedded-model", "embedded_models", multiple=True, metavar="LANG=MODEL",
              help="For the plain 'embedded' spec: the packaged model (smollm2, gemma3-270m) of a "
              "language instead of the measured default. Repeatable.")
def dialogues_command(contexts_path: Path, users: tuple[str, ...], judge: str, chatbots: tuple[str, ...],
                      out: Path, filtered_out: Path | None, max_turns: int, first_turn_attempts: int,
                      later_turn_attempts: int, max_tokens: int, opening_max_tokens: int,
                      opening_temperature: float, judge_mode: str, no_role_check: bool,
                      seed: int, concurrency: int, cache_path: str | None, no_cache: bool,
                      limit: int | None, embedded_models: tuple[str, ...]) -> None:
    """Simulate dialogues: a user agent (checked turn by turn by a judge) talks to each chatbot.

    Each dialogue is appended to OUT (or to the filtered file) as soon as it ends. Interrupt the
    run and start the same command again: finished dialogues are skipped, and the response cache
    answers the calls already made. The plain 'embedded' spec picks, per role and language, the
    packaged model measured to write that language better (docs/synth.md); 'embedded:smollm2'
    uses one model for every language.
    """
    from convoscope.synth import SynthSettings, read_contexts

    console = Console(stderr=True)
    with fail_on(console):
        contexts = read_contexts(contexts_path)[: limit or None]
        settings = SynthSettings(max_turns=max_turns, first_turn_attempts=first_turn_attempts,
                                 later_turn_attempts=later_turn_attempts, user_max_tokens=max_tokens,
                                 chatbot_max_tokens=max_tokens, judge_mode=judge_mode,  # type: ignore[arg-type]
                                 user_first_max_tokens=opening_max_tokens,
                                 user_first_temperature=opening_temperature,
                                 check_role=not no_role_check, seed=seed)
        cache = None if no_cache else cache_path or str(out.with_suffix(".cache.db"))
        choice = _language_choice(embedded_models)
        console.print(f"{len(contexts)} contexts x {len(users)} users x {len(chatbots)} chatbots")
        summary = asyncio.run(_generate(console, contexts, users, judge, chatbots, out, filtered_out,
                                        settings, concurrency, cache, choice))
        _print_generation(summary)


def _language_choice(pairs: tuple[str, ...]) -> dict[str, str]:
    choice = {}
    for pair in pairs:
        language, sep, model = pair.partition("=")
        if not sep or not language.strip() or not model.strip():
            raise click.BadParameter(f"{pair!r}: write LANG=MODEL, e.g. ko=gemma3-270m",
                                     param_hint="--embedded-model")
        choice[language.strip()] = model.strip()
    return choice


async def _generate(console, contexts, users, judge, chatbots, out, filtered_out, settings,
                    concurrency, cache, choice):
    from convoscope.models import ResponseCache
    from convoscope.synth import generate_dialogues_async, model_label

    store = ResponseCache(cache) if cache else None
    models = _RoleModels(store, choice)
    user_models = _labelled(users, lambda spec: models.get(spec, "user"), model_label)
    bot_models = _labelled(chatbots, lambda spec: models.get(spec, "chatbot"), model_label)
    judge_model = None if judge.lower() == "none" else models.get(judge, "judge")

    _print_choice(console, [user_models, {"": judge_model}, bot_models], contexts)

    def report(item) -> None:
        synth = item.meta["synth"]
        status = "kept" if synth["filter"]["passed"] else "filtered: " + ", ".join(synth["filter"]["reasons"])
        console.print(f"{item.id}: {len(item.context)} turns, ended by {synth['end']}, {status}")

    try:
        return await generate_dialogues_async(
            contexts, users=user_models, judge=judge_model, chatbots=bot_models, out=out,
            filtered_out=filtered_out, settings=settings, concurrency=concurrency, on_dialogue=report)
    finally:
        await models.aclose()
        if store is not None:
            store.close()


class _RoleModels:
    """One model per spec, except embedded models: each role (user, judge, chatbot) gets its own
    in-process instances, so each keeps its prompt prefix in its own KV cache (one shared
    instance re-read the judge's prompt from scratch after every user turn) and the roles run in
    parallel instead of queueing on one lock. The plain ``embedded`` spec is the model chosen
    per language (``EmbeddedByLanguage``). HTTP models are shared: the server caches."""

    def __init__(self, store, choice: dict[str, str] | None = None) -> None:
        self._store = store
        self._choice = choice or {}
        self._built: dict[tuple[str, str], object] = {}

    def get(self, spec: str, role: str):
        from convoscope.models import open_model
        from convoscope.synth import EmbeddedByLanguage

        bare = spec.partition("=")[2] if "=" in spec.split(":")[0] else spec
        key = (bare, role if bare.split(":")[0] == "embedded" else "")
        if key not in self._built:
            if bare == "embedded":
                self._built[key] = EmbeddedByLanguage(
                    role, lambda name: open_model(f"embedded:{name}", cache=self._store),  # type: ignore[arg-type]
                    choice=self._choice)
            else:
                self._built[key] = open_model(bare, cache=self._store)
        return self._built[key]

    async def aclose(self) -> None:
        for instance in self._built.values():
            await instance.aclose()  # type: ignore[attr-defined]


def _print_choice(console, role_maps, contexts) -> None:
    """Which packaged model plays each role per language, for the plain 'embedded' spec."""
    from convoscope.synth import EmbeddedByLanguage

    languages = sorted({context.language for context in contexts})
    for models in role_maps:
        for model in models.values():
            if isinstance(model, EmbeddedByLanguage):
                chosen = ", ".join(f"{language} {model.model_name(language) or 'none (rules only)'}"
                                   for language in languages)
                console.print(f"Embedded {model.role}: {chosen}")


def _labelled(specs, build, label):
    labelled = {}
    for spec in specs:
        name = label(spec)
        if name in labelled:
            raise click.BadParameter(f"two models are both named {name!r}: name them with NAME=SPEC")
        labelled[name] = build(spec)
    return labelled


def _print_generation(summary) -> None:
    table = Table(title="Dialogue generation", show_header=False)
    rows = [("planned", summary.planned), ("already done (skipped)", summary.already_done),
            ("written now", summary.written), ("  of which filtered", summary.filtered),
            *((f"ended by {name}", count) for name, count in sorted(summary.ends.items())),
            *((f"filtered: {name}", count) for name, count in sorted(summary.filter_reasons.items())),
            *((f"{role}: calls / cache hits / tokens in+out",
               f"{u.calls} / {u.cache_hits} / {u.prompt_tokens}+{u.completion_tokens}")
              for role, u in sorted(summary.usage.items())),
            ("wall time", f"{summary.wall_time_s:.1f} s"), ("kept", summary.out),
            ("filtered", summary.filtered_out)]
    for name, value in rows:
        table.add_row(name, str(value))
    Console().print(table)
    if summary.judge_note:
        Console().print(f"Judge: {summary.judge_note}.")


STATS_EXAMPLE = """
\b
Examples:
  convoscope synth stats dialogues.jsonl dialogues.filtered.jsonl
  convoscope synth stats dialogues.jsonl --out stats.json
"""


@synth_group.command("stats", epilog=STATS_EXAMPLE)
@click.argument("paths", metavar="DIALOGUES...", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Also write the rows as JSON.")
@click.option("--include-filtered", is_flag=True,
              help="Compute the text columns over filtered dialogues too (usage always includes them).")
def stats_command(paths: tuple[Path, ...], out: Path | None, include_filtered: bool) -> None:
    """Per-language statistics: turns, utterance length, MTLD, judge acceptance, calls, tokens.

    A file that does not exist or holds no dialogue is noted and skipped (a run whose dialogues
    were all filtered writes no kept file, and the other way round).
    """
    from convoscope.items import read_items
    from convoscope.synth import stats_table, synth_stats

    console = Console(stderr=True)
    with fail_on(console):
        items = []
        for path in paths:
            if not path.is_file():
                click.echo(f"Note: {path} does not exist (no dialogue was written there); skipped.", err=True)
            elif not path.read_text(encoding="utf-8").strip():
                click.echo(f"Note: {path} is empty (no dialogue in it); skipped.", err=True)
            else:
                items.extend(read_items(path))
        if not items:
            click.echo("No dialogues in the files given: nothing to describe.", err=True)
        rows = synth_stats(items, include_filtered=include_filtered)
        click.echo(stats_table(rows))
        if out is not None:
            out.write_text(json.dumps([row.model_dump() for row in rows], indent=2), encoding="utf-8")
            console.print(f"Wrote {out}")


CURATE_EXAMPLE = """
\b
Examples:
  convoscope synth curate dialogues.jsonl --verdicts verdicts.jsonl --per-language 100 --out benchmark.jsonl
  convoscope synth curate dialogues.jsonl --verdicts verdicts.jsonl --clean-pick best --out benchmark.jsonl
"""


@synth_group.command("curate", epilog=CURATE_EXAMPLE)
@click.argument("dialogues_path", metavar="DIALOGUES", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--verdicts", "verdicts_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Verdicts JSONL from 'convoscope judge DIALOGUES --suite dialogue-issues --out ...'.")
@click.option("--per-language", type=int, default=100, show_default=True)
@click.option("--rater", help="Which rater's verdicts to use when the file holds several.")
@click.option("--clean-pick", type=click.Choice(["random", "best"]), default="random", show_default=True,
              help="Each user x chatbot pair's issue-free dialogue: drawn at random among those "
              "reaching --clean-min-overall (seed 001), or the best-scoring one.")
@click.option("--clean-min-overall", type=int,
              help="Overall score an issue-free pick must reach (default: the top of the scale, 5).")
@click.option("--seed", type=int, default=0, show_default=True, help="Random draws and ties, reproducibly.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The benchmark, as items JSONL (what 'convoscope judge' and campaigns read).")
@click.option("--summary", "summary_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Balance summary as JSON (default: OUT with .summary.json).")
def curate_command(dialogues_path: Path, verdicts_path: Path, per_language: int, rater: str | None,
                   clean_pick: str, clean_min_overall: int | None, seed: int, out: Path,
                   summary_path: Path | None) -> None:
    """Select a benchmark balanced over issues, overall scores and chatbots, per language."""
    from convoscope.items import read_items, write_jsonl
    from convoscope.synth import curate, read_curation_verdicts

    console = Console(stderr=True)
    with fail_on(console):
        items = read_items(dialogues_path)
        chosen, summaries = curate(items, read_curation_verdicts(verdicts_path), per_language=per_language,
                                   seed=seed, rater=rater, clean_pick=clean_pick,  # type: ignore[arg-type]
                                   clean_min_overall=clean_min_overall)
        write_jsonl(chosen, out)
        summary_path = summary_path or out.with_name(out.name.removesuffix(".jsonl") + ".summary.json")
        summary_path.write_text(json.dumps([s.model_dump(mode="json") for s in summaries], indent=2),
                                encoding="utf-8")
        console.print(f"Wrote {len(chosen)} dialogues to {out} and the balance summary to {summary_path}")
        _print_curation(summaries)


def _print_curation(summaries) -> None:
    table = Table(title="Benchmark balance")
    for column in ("language", "selected", "pool", "by chatbot", "by overall", "by issue",
                   "issue-free", "excluded", "relaxed"):
        table.add_column(column)
    for s in summaries:
        issues = ", ".join(f"{k} {v}" for k, v in s.by_issue.items() if v)
        table.add_row(s.language, str(s.selected), str(s.pool), _pairs(s.by_chatbot), _pairs(s.by_overall),
                      issues or "-", str(s.issue_free), _pairs(s.excluded) or "-", _pairs(s.relaxed) or "-")
    Console().print(table)


def _pairs(counts: dict[str, int]) -> str:
    return ", ".join(f"{key} {value}" for key, value in counts.items())


COMMANDS = [synth_group]
