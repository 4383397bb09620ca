"""Generated message trajectories, in each shape agentevals and openevals accept.

A trajectory is a user message, then per group of tool calls an assistant message
(with its calls) and one tool message per call, then a final answer. Arguments
draw from few keys and values, ``None`` and nested dicts among them, so field
paths are often equal, often different, and often missing on one side only.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

Group = list[tuple[str, dict[str, Any]]]

values = st.sampled_from([0, 1, "x", "ü", None, {"n": 1}, {"n": None}, {}])
arguments = st.dictionaries(st.sampled_from(["a", "b"]), values, max_size=2)
calls = st.tuples(st.sampled_from(["f", "g"]), arguments)
groups = st.lists(st.lists(calls, max_size=3), max_size=4)

# Argument rules that are equivalences, or partial equivalences under openevals' rule
# that a missing field matches nothing: first-fit pairing is optimal under them, so the
# peers' answers are right and lg_eval's must equal them.
EQUIVALENCE_RULES: list[dict[str, Any]] = [
    {},
    {"tool_args_match_mode": "ignore"},
    {"tool_args_match_overrides": {"f": ["a"], "g": ["b.n"]}},
    {"tool_args_match_mode": "ignore", "tool_args_match_overrides": {"f": ["a", "b.n"]}},
    {"tool_args_match_overrides": {"f": "ignore", "g": ["b"]}},
]
rules = st.sampled_from(EQUIVALENCE_RULES)
MODES = ("strict", "unordered", "subset", "superset")


def openai_messages(call_groups: list[Group]) -> list[dict[str, Any]]:
    """The trajectory as OpenAI-format message dicts (arguments as JSON text)."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "q"}]
    for group in call_groups:
        message: dict[str, Any] = {"role": "assistant", "content": "t"}
        if group:
            message["tool_calls"] = [
                {"function": {"name": name, "arguments": json.dumps(args)}} for name, args in group
            ]
        out.append(message)
        out.extend({"role": "tool", "content": "r"} for _ in group)
    out.append({"role": "assistant", "content": "done"})
    return out


def langchain_messages(call_groups: list[Group]) -> list[BaseMessage]:
    """The same trajectory as LangChain messages."""
    out: list[BaseMessage] = [HumanMessage("q")]
    for n, group in enumerate(call_groups):
        ids = [f"c{n}_{k}" for k in range(len(group))]
        tool_calls = [
            {"name": name, "args": args, "id": id_}
            for (name, args), id_ in zip(group, ids, strict=True)
        ]
        out.append(AIMessage("t", tool_calls=tool_calls))
        out.extend(ToolMessage("r", tool_call_id=id_) for id_ in ids)
    out.append(AIMessage("done"))
    return out


SHAPES = {
    "openai": openai_messages,
    "langchain": langchain_messages,
    "state": lambda call_groups: {"messages": openai_messages(call_groups)},
}
shapes = st.sampled_from(sorted(SHAPES))


def shaped(shape: str, call_groups: list[Group]) -> Any:
    """The trajectory in one of the accepted shapes."""
    return SHAPES[shape](call_groups)
