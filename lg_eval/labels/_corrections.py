"""Correcting a judge: the cases it got wrong, as few-shot examples for its prompt.

:func:`correction_examples` takes the disagreements of a key with the people's labels on
the *examples* side of the split (:func:`~lg_eval.labels.label_split`) and turns each into
a graded example in the judges' ``few_shot_examples`` shape: what the case was given, what
the agent did (its tool calls and final answer, else its steps and answers per turn), the
person's verdict as the ``score`` and their note as the ``reasoning``. A judge built with
them (``create_trajectory_llm_as_judge(..., few_shot_examples=corrections.examples)``)
renders them the way it renders the thread it judges: every value escaped, inside the
prompt's ``<example>`` fences, so a note or an answer cannot close them.

It is opt-in and bounded: at most :data:`MAX_EXAMPLES` examples, the last :data:`MAX_TURNS`
turns (or :data:`MAX_CALLS` tool calls) of each, every value cut to :data:`MAX_TEXT`
characters. Measure the corrected judge with ``calibrate(..., split="held_out")`` and the
same ``fraction`` and ``salt``: those cases are never on the side the examples come from.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

from annotated_types import Le
from pydantic import BaseModel, ConfigDict, Field

from lg_eval._arguments import Count, Fraction, validated
from lg_eval.experiments import CaseResult, ResultStore
from lg_eval.labels._pairs import PairedLabel, paired_labels
from lg_eval.labels._split import EXAMPLES_FRACTION, case_hash

MAX_EXAMPLES = 20
"""The most examples a correction adds to a prompt."""
MAX_TURNS = 8
"""The last turns of a case an example shows."""
MAX_TEXT = 800
"""The longest value (an input, an answer, a note) an example shows, in characters."""
MAX_CALLS = 12
"""The last tool calls of a case an example shows."""
MAX_ARGS = 20
"""The arguments of a call an example shows."""


class Corrections(BaseModel):
    """Few-shot examples from a key's disagreements with people, and where they came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    label_key: str
    fraction: float = Field(description="The share of cases on the examples side.")
    salt: str
    examples: list[dict[str, Any]] = Field(
        description="For the judge's few_shot_examples: inputs, outputs, reasoning, score."
    )
    cases: list[str] = Field(description="The cases the examples show (never held out).")
    disagreements: int = Field(description="Disagreements found on the examples side.")


@validated
def correction_examples(
    store: ResultStore,
    key: str,
    *,
    label_key: str | None = None,
    runs: Sequence[str] | None = None,
    limit: Annotated[Count, Le(MAX_EXAMPLES)] = 4,
    fraction: Fraction = EXAMPLES_FRACTION,
    salt: str = "",
) -> Corrections:
    """Up to ``limit`` of ``key``'s disagreements with the labels of ``label_key`` (default
    ``key``) on the examples side of the split, as few-shot examples (one per case, the
    order fixed by ``salt``).

    Raises:
        InvalidOptionError: ``limit`` is not in 1..20, or ``fraction`` not in [0, 1].
        StoreError: a stored label, feedback row or case result does not read.
    """
    pairing = paired_labels(
        store,
        key,
        label_key=label_key,
        runs=runs,
        split="examples",
        fraction=fraction,
        salt=salt,
    )
    wrong = [paired for paired in pairing.pairs if paired.judge != paired.human]
    chosen: dict[str, PairedLabel] = {}
    for paired in sorted(wrong, key=lambda p: (case_hash(p.case, salt + "order"), p.run_id)):
        if len(chosen) < limit and paired.case not in chosen:
            chosen[paired.case] = paired
    return Corrections(
        key=key,
        label_key=label_key or key,
        fraction=fraction,
        salt=salt,
        examples=[_example(_result(store, paired), paired) for paired in chosen.values()],
        cases=list(chosen),
        disagreements=len(wrong),
    )


def _result(store: ResultStore, paired: PairedLabel) -> CaseResult | None:
    rows = store.query(
        "SELECT result FROM lg_eval_cases WHERE run_id = ? AND case_id = ? AND repetition = ?",
        (paired.run_id, paired.case_id, paired.repetition),
    )
    return CaseResult.model_validate_json(rows[0][0]) if rows else None


def _example(result: CaseResult | None, paired: PairedLabel) -> dict[str, Any]:
    verdict = "pass" if paired.human else "fail"
    reasoning = f"A person judged this case: {verdict}."
    if paired.note:
        reasoning += f" {paired.note}"
    example: dict[str, Any] = {"reasoning": _cut(reasoning), "score": paired.human}
    if result is None:
        return {"outputs": "(the case's result is no longer stored)", **example}
    sent = [turn.sent for turn in result.turns]
    if sent:
        example["inputs"] = _cut(sent[0])
    example["outputs"] = _outputs(result, sent)
    return example


def _outputs(result: CaseResult, sent: Sequence[Any]) -> Any:
    """What the agent did, as the judges render a trajectory: its tool calls and final
    answer as messages, else its steps and answers per turn, else its final answer."""
    if result.tool_calls:
        calls = [
            {"name": str(call.get("name")), "args": _args(call.get("args")), "id": f"call-{n}"}
            for n, call in enumerate(result.tool_calls[-MAX_CALLS:])
        ]
        messages: list[dict[str, Any]] = [{"role": "assistant", "content": "", "tool_calls": calls}]
        if result.output:
            messages.append({"role": "assistant", "content": _cut(result.output)})
        return messages
    steps = result.trajectory or []
    if steps:
        first = max(0, len(steps) - MAX_TURNS)
        answers = list(result.answers or [])
        return {
            "inputs": [_cut(_at(sent, i)) for i in range(first, len(steps))],
            "results": [_cut(_at(answers, i)) for i in range(first, len(steps))],
            "steps": [list(turn) for turn in steps[first:]],
        }
    return _cut(result.output or "")


def _args(args: Any) -> dict[str, Any]:
    """A call's arguments, each value cut (a call without arguments: none)."""
    if not isinstance(args, dict):
        return {}
    return {str(name): _cut(value) for name, value in list(args.items())[:MAX_ARGS]}


def _at(values: Sequence[Any], index: int) -> Any:
    return values[index] if index < len(values) else None


def _cut(value: Any) -> Any:
    """``value`` as it is when short; else its text cut to :data:`MAX_TEXT` characters."""
    if value is None or isinstance(value, bool | int | float):
        return value
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    if len(text) <= MAX_TEXT:
        return value
    return text[: MAX_TEXT - 1] + "…"
