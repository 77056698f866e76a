"""Simulated multilingual dialogues and balanced benchmarks (seed 001, MEDAL stages 1 and 3).

    from convoscope.synth import sample_contexts, generate_dialogues, synth_stats, curate

Seed contexts (scene, persona, affect, gender, language) drive a simulated user whose every turn
is checked by a judge and rewritten on rejection; chatbots answer seeing only the dialogue.
Finished dialogues are filtered (user left its language or its role), described per language,
and, once judged on ``dialogue-issues``, curated into a benchmark balanced over issues, overall
scores and chatbots. Dialogues and benchmark are plain items JSONL.
"""

from convoscope.synth._agents import SynthSettings, Usage, read_yes_no, whole_sentences
from convoscope.synth._checks import CHECKS as JUDGE_CHECKS
from convoscope.synth._checks import (
    CheckCalibration,
    JudgeCalibration,
    calibration_languages,
    judge_by_checks,
    threshold_between,
)
from convoscope.synth._checks import calibrate as calibrate_judge
from convoscope.synth._choice import EmbeddedByLanguage, embedded_choice, for_language, model_prompting
from convoscope.synth._contexts import (
    Persona,
    Scene,
    SeedContext,
    affect_in_scene,
    affect_quadrants,
    builtin_personas,
    builtin_scenes,
    languages,
    read_contexts,
    read_personas,
    read_scenes,
    sample_contexts,
)
from convoscope.synth._curate import (
    DEFAULT_ISSUES,
    Candidate,
    LanguageSummary,
    balanced_pick,
    candidates,
    curate,
    pick_rater,
    read_curation_verdicts,
)
from convoscope.synth._dialogue import (
    Attempt,
    DialogueResult,
    UserTurnLog,
    continue_dialogue,
    opening_turn,
    user_turn_loop,
)
from convoscope.synth._filters import (
    FilterResult,
    LanguageCheck,
    check_role,
    check_user_language,
    filter_dialogue,
    has_language_identifier,
)
from convoscope.synth._mtld import mtld, tokens, utterance_length
from convoscope.synth._patterns import clean_user_text
from convoscope.synth._rules import filter_verdict, gibberish_reason, rule_failure, rule_feedback
from convoscope.synth._run import (
    GenerationSummary,
    default_filtered_path,
    dialogue_id,
    generate_dialogues,
    generate_dialogues_async,
    model_label,
)
from convoscope.synth._stats import LanguageStats, stats_table, synth_stats

__all__ = [
    "DEFAULT_ISSUES",
    "JUDGE_CHECKS",
    "Attempt",
    "Candidate",
    "CheckCalibration",
    "DialogueResult",
    "EmbeddedByLanguage",
    "FilterResult",
    "GenerationSummary",
    "JudgeCalibration",
    "LanguageCheck",
    "LanguageStats",
    "LanguageSummary",
    "Persona",
    "Scene",
    "SeedContext",
    "SynthSettings",
    "Usage",
    "UserTurnLog",
    "affect_in_scene",
    "affect_quadrants",
    "balanced_pick",
    "builtin_personas",
    "builtin_scenes",
    "calibrate_judge",
    "calibration_languages",
    "candidates",
    "check_role",
    "check_user_language",
    "clean_user_text",
    "continue_dialogue",
    "curate",
    "default_filtered_path",
    "dialogue_id",
    "embedded_choice",
    "filter_dialogue",
    "filter_verdict",
    "for_language",
    "generate_dialogues",
    "generate_dialogues_async",
    "gibberish_reason",
    "has_language_identifier",
    "judge_by_checks",
    "languages",
    "model_label",
    "model_prompting",
    "mtld",
    "opening_turn",
    "pick_rater",
    "read_contexts",
    "read_curation_verdicts",
    "read_personas",
    "read_scenes",
    "read_yes_no",
    "rule_failure",
    "rule_feedback",
    "sample_contexts",
    "stats_table",
    "synth_stats",
    "threshold_between",
    "tokens",
    "user_turn_loop",
    "utterance_length",
    "whole_sentences",
]
