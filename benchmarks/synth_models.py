"""Which packaged embedded model should play each synth role in each language (issue 28)?

SmolLM2-135M-Instruct (chat prompts, or a document to continue) and Gemma 3 270M (a base model:
a document to continue; its chat template is missing, so chat prompts are measured too, for the
record) write, per seed language:

- **user**: opening messages for sampled contexts and a later message in a fixed short dialogue,
  with the run's own prompts and sampling. Scored by synth's rules (the ones a run applies before
  any judge call: labels, role breaks, symbols, gibberish filter, length, language identification).
- **chatbot**: replies to fixed user messages in the language. Scored: not empty, in the language
  (py3langid), not gibberish (the project's filter), no symbol soup or markup.
- **judge**: calibration on the language's examples (synth/data/judge_calibration.yaml): how many
  of the three checks separate good from bad examples, and by what margin.

The better configuration per language and role (user and chatbot: pass rate, then seconds per
call; judge: checks separated, then margin) is printed as the ``languages:`` block of
``synth/data/embedded_models.yaml``, and every number with sample texts goes to the report.
Seconds are measured on whatever load the machine has (printed with the load average).

Run by hand:  python benchmarks/synth_models.py --out benchmarks/results/synth_models.md
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from convoscope.items import Turn
from convoscope.models import EmbeddedModel
from convoscope.synth import (
    SynthSettings,
    Usage,
    calibrate_judge,
    check_user_language,
    filter_verdict,
    rule_failure,
    sample_contexts,
)
from convoscope.synth import _patterns as patterns
from convoscope.synth import _prompts as prompts
from convoscope.synth._agents import chatbot_reply, write_user_turn
from convoscope.synth._checks import calibration_examples

LANGUAGES = ("en", "ko", "pt", "es", "ja", "zh")
CONFIGS = ("smollm2/chat", "smollm2/completion", "gemma3-270m/completion", "gemma3-270m/chat")


@dataclass
class Scores:
    texts: list[str] = field(default_factory=list)
    passed: list[bool] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return sum(self.passed) / len(self.passed) if self.passed else 0.0

    def add(self, text: str, failure: str | None, seconds: float) -> None:
        self.texts.append(text)
        self.passed.append(failure is None)
        self.reasons.append(failure or "")
        self.seconds += seconds


def chatbot_failure(text: str, language: str) -> str | None:
    if not text.strip():
        return "empty"
    if patterns.mostly_symbols(text) or patterns.markup(text):
        return "symbols/markup"
    verdict = filter_verdict(text, language)
    if verdict is not None and verdict.gibberish:
        return "gibberish"
    if not check_user_language([Turn(speaker="user", text=text)], language, min_chars=10).passed:
        return "language"
    return None


def probe_turns(language: str) -> list[tuple[Turn, ...]]:
    """Fixed conversations in the language: the calibration file's good 'coherent' examples."""
    examples = calibration_examples(language)["coherent"]["good"]
    return [turns for turns, _ in examples]


async def user_role(model: EmbeddedModel, prompting: str, language: str, args: argparse.Namespace) -> Scores:
    settings = SynthSettings(prompting=prompting, user_max_tokens=args.max_tokens)  # type: ignore[arg-type]
    scores = Scores()
    contexts = sample_contexts(args.n, [language], seed=args.seed)
    jobs = [(context, ()) for context in contexts]
    jobs += [(contexts[i % len(contexts)], turns) for i, turns in enumerate(probe_turns(language))]
    for number, (context, turns) in enumerate(jobs):
        started = time.perf_counter()
        text, cut = await write_user_turn(model, context, list(turns), settings, Usage(), seed=1000 + number)
        shown = prompts.example_messages(language) if prompting == "completion" else ()
        found = rule_failure(text, opening=not turns, end_signal=settings.end_signal, language=language,
                             earlier=[t.text for t in turns if t.speaker == "user"],
                             max_words=settings.max_user_words, cut=cut, examples=shown)
        scores.add(text, found[0] if found else None, time.perf_counter() - started)
    return scores


async def chatbot_role(model: EmbeddedModel, prompting: str, language: str,
                       args: argparse.Namespace) -> Scores:
    settings = SynthSettings(prompting=prompting, chatbot_max_tokens=args.max_tokens)  # type: ignore[arg-type]
    scores = Scores()
    examples = calibration_examples(language)
    messages = [message for check in ("natural", "in_role") for turns, message in examples[check]["good"]
                if not turns][: args.n]
    for number, message in enumerate(messages):
        started = time.perf_counter()
        reply = await chatbot_reply(model, [Turn(speaker="user", text=message)], settings, Usage(),
                                    seed=2000 + number, language=language)
        scores.add(reply, chatbot_failure(reply, language), time.perf_counter() - started)
    return scores


async def judge_role(model: EmbeddedModel, language: str) -> tuple[int, float, dict[str, float | None]]:
    calibration, _ = await calibrate_judge(model, language=language)
    margins = {name: (min(c.good) - max(c.bad)) if c.good and c.bad else None
               for name, c in calibration.checks.items()}
    separated = sum(c.threshold is not None for c in calibration.checks.values())
    return separated, sum(m for m in margins.values() if m is not None and m > 0), margins


async def measure(args: argparse.Namespace) -> dict:
    models = {name: EmbeddedModel(name, n_threads=args.threads) for name in ("smollm2", "gemma3-270m")}
    results: dict = {"user": {}, "chatbot": {}, "judge": {}}
    try:
        for language in args.languages:
            for config in args.configs:
                name, prompting = config.split("/")
                model = models[name]
                results["user"][language, config] = await user_role(model, prompting, language, args)
                results["chatbot"][language, config] = await chatbot_role(model, prompting, language, args)
                print(f"{language} {config}: user {results['user'][language, config].rate:.2f} "
                      f"chatbot {results['chatbot'][language, config].rate:.2f}", flush=True)
            for name, model in models.items():
                results["judge"][language, name] = await judge_role(model, language)
    finally:
        for model in models.values():
            await model.aclose()
    return results


def choose(results: dict, languages: list[str], configs: list[str]) -> dict[str, dict[str, str]]:
    """Per language and role, the better model (user, chatbot: pass rate then speed; judge:
    checks separated then margin). Only the prompting the run uses for a model competes."""
    used = [config for config in configs if config in ("smollm2/chat", "gemma3-270m/completion")]
    chosen: dict[str, dict[str, str]] = {}
    for language in languages:
        pick = {}
        for role in ("user", "chatbot"):
            best = max(used, key=lambda c: (results[role][language, c].rate,
                                            -results[role][language, c].seconds))
            pick[role] = best.split("/")[0]
        judges = {name: results["judge"][language, name] for name in ("smollm2", "gemma3-270m")}
        pick["judge"] = max(judges, key=lambda name: (judges[name][0], judges[name][1]))
        chosen[language] = pick
    return chosen


def cell(scores: Scores) -> str:
    return f"{scores.rate:.2f} ({scores.seconds / max(1, len(scores.texts)):.1f} s a call)"


def report(results: dict, args: argparse.Namespace, chosen: dict, elapsed: float) -> str:
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    lines = [f"Measured with `python benchmarks/synth_models.py --n {args.n} --max-tokens {args.max_tokens}` "
             f"in {elapsed / 60:.1f} min on 2 shared cores (load average at the end: {load}).", ""]
    for role in ("user", "chatbot"):
        lines += [f"### {role}: share of texts that pass (n per cell: {args.n} openings + 3 later turns "
                  "for the user)" if role == "user" else f"### {role}: share of usable replies", "",
                  "| language | " + " | ".join(args.configs) + " |", "|---|" + "---|" * len(args.configs)]
        for language in args.languages:
            cells = [cell(results[role][language, c]) for c in args.configs]
            lines.append(f"| {language} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["### judge: checks separated on the language's examples "
              "(margin: lowest good minus highest bad P(yes), per check)", "",
              "| language | smollm2 | gemma3-270m |", "|---|---|---|"]
    for language in args.languages:
        cells = []
        for name in ("smollm2", "gemma3-270m"):
            separated, _, margins = results["judge"][language, name]
            shown = ", ".join(f"{check} {margin:+.2f}" for check, margin in margins.items()
                              if margin is not None)
            cells.append(f"{separated} ({shown})")
        lines.append(f"| {language} | " + " | ".join(cells) + " |")
    lines += ["", "### chosen (synth/data/embedded_models.yaml)", "", "```yaml", "languages:"]
    lines += [f"  {language}: {{user: {pick['user']}, judge: {pick['judge']}, chatbot: {pick['chatbot']}}}"
              for language, pick in chosen.items()]
    lines += ["```", "", "### samples (first three per cell; ✓ passed, else the rule that refused it)", ""]
    for role in ("user", "chatbot"):
        for language in args.languages:
            for config in args.configs:
                scores = results[role][language, config]
                for text, reason in list(zip(scores.texts, scores.reasons, strict=True))[:3]:
                    shown = text.replace("|", "\\|").replace("\n", " ")[:160]
                    lines.append(f"- {role} {language} {config}: {'✓' if not reason else reason} — {shown!r}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=6, help="openings (and chatbot replies) per cell")
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    args.languages, args.configs = args.languages.split(","), args.configs.split(",")
    started = time.perf_counter()
    results = asyncio.run(measure(args))
    chosen = choose(results, args.languages, args.configs)
    text = report(results, args, chosen, time.perf_counter() - started)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
