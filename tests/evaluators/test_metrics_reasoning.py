"""Reasoning coherence, specialized-tool rules and source citation."""

from __future__ import annotations

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import (
    create_reasoning_coherence_evaluator,
    create_source_citation_evaluator,
    create_specialized_tool_evaluator,
)

from .builders import ai, call, tool, user


def test_coherence_is_one_when_every_step_states_a_thought():
    outputs = [
        user(),
        ai(call("search", q="a"), content="Look it up."),
        tool(),
        ai(call("calc", e="1"), content="Now compute."),
        tool(),
        ai(content="2"),
    ]
    result = create_reasoning_coherence_evaluator()(outputs=outputs)
    assert result["score"] == 1.0 and result["comment"] is None


def test_coherence_penalizes_silent_and_repeated_steps():
    outputs = [
        user(),
        ai(call("search", q="a"), content="Search."),
        tool(),
        ai(call("search", q="a"), content="Again."),
        tool(),
        ai(call("calc", e="1")),
        tool(),
        ai(content="done"),
    ]
    result = create_reasoning_coherence_evaluator()(outputs=outputs)
    assert result["score"] == pytest.approx(1 / 3)
    assert result["comment"] == "Penalized step 2: repeats step 1 (search), step 3: no reasoning."


def test_coherence_without_steps_is_one():
    assert (
        create_reasoning_coherence_evaluator()(outputs=[user(), ai(content="hi")])["score"] == 1.0
    )


def test_specialized_tool_rules_on_arguments():
    rules = {"arxiv": "paper_reader"}
    outputs = [
        user(),
        ai(call("web_search", q="ArXiv 2401.00001"), content="t"),
        tool(),
        ai(call("paper_reader", id="arxiv:2401.00001"), content="t"),
        tool(),
    ]
    result = create_specialized_tool_evaluator(rules)(outputs=outputs)
    assert result["key"] == "specialized_tool_usage"
    assert result["score"] == 0.5
    assert (
        result["comment"] == "Rule violations: 'arxiv' needs paper_reader, step 1 used web_search."
    )


def test_specialized_tool_rules_on_the_query():
    rules = {"paper": "paper_reader", "weather": "get_weather"}
    outputs = [user("Summarize this paper"), ai(call("web_search", q="x"), content="t"), tool()]
    evaluator = create_specialized_tool_evaluator(rules, scope="query")
    assert evaluator(outputs=outputs)["score"] == 0.0
    assert evaluator(outputs=outputs, inputs="What's the weather?")["score"] == 0.0
    assert evaluator(outputs=outputs, inputs="hello")["comment"] == "No rule applied to this run."


@pytest.mark.parametrize("rules", [{}, {"": "t"}, {"k": 3}, ["k"]])
def test_specialized_tool_rejects_bad_rules(rules):
    with pytest.raises(InvalidOptionError, match="keyword -> required tool"):
        create_specialized_tool_evaluator(rules)


def test_specialized_tool_rejects_unknown_scope():
    with pytest.raises(InvalidOptionError, match="args, query"):
        create_specialized_tool_evaluator({"k": "t"}, scope="answer")  # type: ignore[arg-type]


def test_source_citation_counts_cited_urls():
    outputs = [
        user(),
        ai(call("search", q="x"), content="t"),
        tool("See https://a.example/x and https://b.example/y."),
        ai(content="Per https://a.example/x, yes."),
    ]
    result = create_source_citation_evaluator()(outputs=outputs)
    assert result["score"] == 0.5
    assert result["metadata"]["uncited"] == ["https://b.example/y"]
    assert result["comment"] == "1 of 2 sources cited; not cited: https://b.example/y."


def test_source_citation_ignores_trailing_punctuation_and_slashes():
    outputs = [
        user(),
        ai(call("s"), content="t"),
        tool("(https://a.example/doc/)"),
        ai(content="Source: https://a.example/doc."),
    ]
    assert create_source_citation_evaluator()(outputs=outputs)["score"] == 1.0


def test_source_citation_without_sources_is_one():
    outputs = [user(), ai(call("s"), content="t"), tool("no links"), ai(content="ok")]
    result = create_source_citation_evaluator()(outputs=outputs)
    assert result["score"] == 1.0
    assert result["comment"] == "The tools returned no URLs, so there was nothing to cite."
