"""A trajectory judge on a scripted model, named ``tests.experiments.judged:judge`` in datasets
(one module object for the tests and for the runner's ``module:attr`` import)."""

from __future__ import annotations

from lg_eval.judges import create_trajectory_llm_as_judge
from tests.judges.fake_judge import ScriptedJudge, verdict

MODEL = ScriptedJudge.of(verdict(reasoning="Fine.", score=True), repeat_last=True, delay=0.02)
"""Answers every call with a passing verdict after 0.02 s (100 input, 20 output tokens)."""
judge = create_trajectory_llm_as_judge(judge=MODEL)
JUDGE = "tests.experiments.judged:judge"
