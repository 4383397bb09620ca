"""Heuristic metrics on how an agent reasoned: stated thoughts, the right tool, cited sources.

These read the run as ReAct steps (see
:func:`lg_eval.messages.react_steps_from_messages`). They are cheap, stable
stand-ins for questions an LLM judge would answer more richly: did each tool
call come with reasoning, was the specialized tool used where the rules say so,
did the final answer cite the sources the tools returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, get_args

from lg_eval._evaluator import Evaluator, make_evaluator
from lg_eval._feedback import UNIT, Feedback
from lg_eval._inputs import describe_list, text_arg
from lg_eval.errors import InvalidOptionError
from lg_eval.messages import react_steps_from_messages

RuleScope = Literal["args", "query"]
RULE_SCOPES: tuple[RuleScope, ...] = get_args(RuleScope)


def create_reasoning_coherence_evaluator() -> Evaluator:
    """A heuristic for coherent reasoning: every step states a thought and moves on.

    Each tool call is a check; it is penalized when its AI message has no text
    (an action with no stated reasoning) or when it repeats the previous call
    exactly (same tool, same args: no progress). The score is ``1 - penalties /
    steps`` (1.0 with no steps). Key ``reasoning_coherence``.
    """

    def scorer(*, outputs: Any, **_: Any) -> Feedback:
        steps = react_steps_from_messages(outputs).steps
        issues: list[dict[str, Any]] = []
        for n, step in enumerate(steps):
            if not step.thought.strip():
                issues.append({"step": n, "issue": "no reasoning"})
            elif n and (steps[n - 1].action, steps[n - 1].args) == (step.action, step.args):
                issues.append({"step": n, "issue": f"repeats step {n} ({step.action})"})
        value = 1.0 - len(issues) / len(steps) if steps else 1.0
        notes = [f"step {issue['step'] + 1}: {issue['issue']}" for issue in issues]
        comment = f"Penalized {describe_list(notes)}." if notes else None
        return Feedback(
            score=value, comment=comment, metadata={"steps": len(steps), "issues": issues}
        )

    scorer.__doc__ = create_reasoning_coherence_evaluator.__doc__
    return make_evaluator("reasoning_coherence", scorer, reads="messages", score_range=UNIT)


def create_specialized_tool_evaluator(
    rules: Mapping[str, str], *, scope: RuleScope = "args"
) -> Evaluator:
    """Whether the agent used the specialized tool wherever a keyword calls for it.

    ``rules`` maps a keyword to the tool it requires, e.g. ``{"arxiv":
    "paper_reader"}``. Matching is case-insensitive. With ``scope="args"`` every
    call whose arguments mention a keyword is a check, failed when it is not
    the required tool. With ``scope="query"`` every keyword in the user's query
    (``inputs``, else the first user message) is a check, failed when the
    required tool was never called. Score ``1 - violations / checks``; 1.0 when
    no rule applies. Key ``specialized_tool_usage``.

    Raises:
        InvalidOptionError: empty or non-string rules, or an unknown scope.
    """
    if scope not in RULE_SCOPES:
        raise InvalidOptionError(
            f"scope={scope!r} is not allowed; use one of {', '.join(RULE_SCOPES)}."
        )
    if (
        not isinstance(rules, Mapping)
        or not rules
        or not all(isinstance(k, str) and k and isinstance(v, str) and v for k, v in rules.items())
    ):
        raise InvalidOptionError(
            "rules must be a non-empty dict of keyword -> required tool name, "
            "e.g. {'arxiv': 'paper_reader'}."
        )
    folded = {keyword.casefold(): tool for keyword, tool in rules.items()}

    def scorer(*, outputs: Any, inputs: Any = None, **_: Any) -> Feedback:
        trace = react_steps_from_messages(outputs)
        checks: list[dict[str, Any]] = []
        if scope == "args":
            for step in trace.steps:
                text = json.dumps(step.args, ensure_ascii=False).casefold()
                for keyword, tool in folded.items():
                    if keyword in text:
                        checks.append(
                            {
                                "step": step.index,
                                "keyword": keyword,
                                "required": tool,
                                "used": step.action,
                                "ok": step.action == tool,
                            }
                        )
        else:
            query = (text_arg(inputs, "inputs") if inputs is not None else trace.query) or ""
            used = set(trace.tools_used)
            for keyword, tool in folded.items():
                if keyword in query.casefold():
                    checks.append({"keyword": keyword, "required": tool, "ok": tool in used})
        violations = [check for check in checks if not check["ok"]]
        value = 1.0 - len(violations) / len(checks) if checks else 1.0
        notes = [
            f"{v['keyword']!r} needs {v['required']}"
            + (f", step {v['step'] + 1} used {v['used']}" if "step" in v else ", never called")
            for v in violations
        ]
        comment = f"Rule violations: {describe_list(notes)}." if notes else None
        if not checks:
            comment = "No rule applied to this run."
        return Feedback(
            score=value, comment=comment, metadata={"checks": checks, "violations": len(violations)}
        )

    scorer.__doc__ = create_specialized_tool_evaluator.__doc__
    return make_evaluator("specialized_tool_usage", scorer, reads="messages", score_range=UNIT)


_URL = re.compile(r"https?://[^\s<>\"'{}|\\^`\[\]()]+")
_URL_TAIL = ".,;:!?"


def extract_urls(text: str) -> set[str]:
    """The http(s) URLs in ``text``, without trailing punctuation or slash."""
    return {match.rstrip(_URL_TAIL).rstrip("/") for match in _URL.findall(text or "")}


def create_source_citation_evaluator() -> Evaluator:
    """The share of source URLs returned by tools that the final answer cites.

    URLs are collected from every tool observation and from the final answer
    (the last AI message without tool calls); trailing punctuation and slashes
    are ignored. Score ``cited / sources``, 1.0 when the tools returned no
    URL. Key ``source_citation``.
    """

    def scorer(*, outputs: Any, **_: Any) -> Feedback:
        trace = react_steps_from_messages(outputs)
        sources: set[str] = set()
        for step in trace.steps:
            sources |= extract_urls(step.observation or "")
        cited = sources & extract_urls(trace.final_answer or "")
        uncited = sorted(sources - cited)
        value = len(cited) / len(sources) if sources else 1.0
        comment = None
        if not sources:
            comment = "The tools returned no URLs, so there was nothing to cite."
        elif uncited:
            comment = f"{len(cited)} of {len(sources)} sources cited; not cited: " + (
                describe_list(uncited) + "."
            )
        metadata = {"sources": sorted(sources), "cited": sorted(cited), "uncited": uncited}
        return Feedback(score=value, comment=comment, metadata=metadata)

    scorer.__doc__ = create_source_citation_evaluator.__doc__
    return make_evaluator("source_citation", scorer, reads="messages", score_range=UNIT)
