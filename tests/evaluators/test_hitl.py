"""hitl_match: the questions a graph asked and the answers it got, on real checkpointed threads."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from graphs.scenarios import SCENARIOS, thread_config
from lg_eval import GraphTrajectory, ThreadTrajectory, extract_thread
from lg_eval._trajectory import InterruptRecord, Turn
from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.evaluators import (
    create_hitl_evaluator,
    get_evaluator,
    graph_trajectory_strict_match,
)

QUESTION = "Approve refund?"

# --------------------------------------------------------------------------- graphs


class RefundState(TypedDict, total=False):
    amount: int
    decision: Any
    status: str


def draft(state: RefundState) -> dict[str, Any]:
    return {"amount": state["amount"]}


def review(state: RefundState) -> dict[str, Any]:
    return {"decision": interrupt({"question": QUESTION, "amount": state["amount"]})}


def act(state: RefundState) -> dict[str, Any]:
    decision = state["decision"]
    approved = decision == "approve" or (isinstance(decision, dict) and decision.get("approved"))
    return {"status": "refunded" if approved else "declined"}


def refund_graph(checkpointer: Any) -> Any:
    """draft -> review (interrupts with the question) -> act on the answer."""
    builder = StateGraph(RefundState)
    builder.add_node("draft", draft)
    builder.add_node("review", review)
    builder.add_node("act", act)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "review")
    builder.add_edge("review", "act")
    builder.add_edge("act", END)
    return builder.compile(checkpointer=checkpointer)


def refund_thread(graph: Any, thread_id: str, answer: Any, amount: int = 30) -> ThreadTrajectory:
    config = {"configurable": {"thread_id": thread_id}}
    graph.invoke({"amount": amount}, config)
    graph.invoke(Command(resume=answer), config)
    return extract_thread(graph, config)


class ReviewState(TypedDict, total=False):
    reviews: Annotated[list[Any], operator.add]


def reviewer(name: str) -> Any:
    def node(state: ReviewState) -> dict[str, Any]:
        return {"reviews": [interrupt({"reviewer": name, "question": f"{name} OK?"})]}

    return node


def parallel_graph(checkpointer: Any) -> Any:
    """legal_review and finance_review interrupt in the same superstep."""
    builder = StateGraph(ReviewState)
    builder.add_node("legal_review", reviewer("legal"))
    builder.add_node("finance_review", reviewer("finance"))
    builder.add_edge(START, "legal_review")
    builder.add_edge(START, "finance_review")
    builder.add_edge(["legal_review", "finance_review"], END)
    return builder.compile(checkpointer=checkpointer)


def parallel_thread(graph: Any, thread_id: str, legal: Any, finance: Any) -> ThreadTrajectory:
    config = {"configurable": {"thread_id": thread_id}}
    graph.invoke({"reviews": []}, config)
    answers = {"legal": legal, "finance": finance}
    pending = graph.get_state(config).interrupts
    graph.invoke(Command(resume={i.id: answers[i.value["reviewer"]] for i in pending}), config)
    return extract_thread(graph, config)


@pytest.fixture(scope="module")
def refunds() -> dict[str, ThreadTrajectory]:
    graph = refund_graph(InMemorySaver())
    return {
        "approved": refund_thread(graph, "approved", "approve"),
        "rejected": refund_thread(graph, "rejected", "reject"),
        "approved_40": refund_thread(graph, "approved-40", "approve", amount=40),
    }


hitl = create_hitl_evaluator()

# --------------------------------------------------------------------------- the issue


@pytest.mark.parametrize("saver", ["memory_saver", "sqlite_saver"])
def test_hitl_tells_the_approved_thread_from_the_rejected_one(saver, request):
    graph = refund_graph(request.getfixturevalue(saver))
    approved = refund_thread(graph, "approved", "approve")
    rejected = refund_thread(graph, "rejected", "reject")

    assert approved.to_graph_trajectory().steps == rejected.to_graph_trajectory().steps
    flat = graph_trajectory_strict_match(outputs=rejected, reference_outputs=approved)
    assert flat["score"] is True

    same = hitl(outputs=approved, reference_outputs=approved)
    assert (same["key"], same["score"], same["comment"]) == ("hitl_match", True, None)
    differs = hitl(outputs=rejected, reference_outputs=approved)
    assert differs["score"] is False
    assert differs["comment"] == "Turn 2: answered 'reject', expected 'approve'."
    assert differs["metadata"] == {
        "by": "turn",
        "checked": {"questions": True, "answers": True},
        "turns": [
            {
                "turn": 0,
                "questions": [{"question": QUESTION, "amount": 30}],
                "expected_questions": [{"question": QUESTION, "amount": 30}],
                "questions_match": True,
                "answer": None,
                "expected_answer": None,
                "answer_match": True,
            },
            {
                "turn": 1,
                "questions": [],
                "expected_questions": [],
                "questions_match": True,
                "answer": "reject",
                "expected_answer": "approve",
                "answer_match": False,
            },
        ],
    }


def test_a_different_question_is_named_with_its_field(refunds):
    result = hitl(outputs=refunds["approved_40"], reference_outputs=refunds["approved"])
    assert result["score"] is False
    assert result["comment"] == (
        "Turn 1: asked {'question': 'Approve refund?', 'amount': 40}, expected "
        "{'question': 'Approve refund?', 'amount': 30} (field 'amount')."
    )
    assert [row["questions_match"] for row in result["metadata"]["turns"]] == [False, True]


def test_the_dict_forms_and_the_field_lookup_read_the_same(refunds):
    approved, rejected = refunds["approved"], refunds["rejected"]
    as_dicts = hitl(outputs=rejected.model_dump(), reference_outputs=approved.model_dump())
    looked_up = hitl(outputs={"thread": rejected}, reference_outputs={"trajectory": approved})
    assert as_dicts == looked_up == hitl(outputs=rejected, reference_outputs=approved)


def test_registered_by_name(refunds):
    evaluator = get_evaluator("hitl_match", answers="ignore")
    assert (evaluator.key, evaluator.reads) == ("hitl_match", "thread")
    assert evaluator(outputs=refunds["rejected"], reference_outputs=refunds["approved"])["score"]


# --------------------------------------------------------------------------- question modes


def test_ignore_fields_drops_them_on_both_sides(refunds):
    evaluator = create_hitl_evaluator(ignore_fields=["amount"])
    result = evaluator(outputs=refunds["approved_40"], reference_outputs=refunds["approved"])
    assert result["score"] is True
    assert result["metadata"]["turns"][0]["questions"] == [{"question": QUESTION}]


def test_subset_accepts_extra_fields_exact_does_not(refunds):
    reference = GraphTrajectory(interrupts=[[{"question": QUESTION}], []])
    subset = create_hitl_evaluator(questions="subset")
    assert subset(outputs=refunds["approved_40"], reference_outputs=reference)["score"] is True
    exact = hitl(outputs=refunds["approved_40"], reference_outputs=reference)
    assert exact["comment"] == (
        "Turn 1: asked {'question': 'Approve refund?', 'amount': 40}, expected "
        "{'question': 'Approve refund?'} (unexpected field 'amount')."
    )
    missing = subset(
        outputs=refunds["approved"],
        reference_outputs={"interrupts": [[{"question": QUESTION, "currency": "EUR"}], []]},
    )
    assert missing["comment"].endswith("(field 'currency' missing).")


def test_contains_matches_part_of_a_string(refunds):
    contains = create_hitl_evaluator(questions="contains")
    part = {"interrupts": [[{"question": "refund"}], []]}
    assert contains(outputs=refunds["approved"], reference_outputs=part)["score"] is True
    subset = create_hitl_evaluator(questions="subset")
    assert subset(outputs=refunds["approved"], reference_outputs=part)["score"] is False
    other = contains(
        outputs=refunds["approved"], reference_outputs={"interrupts": [["cancel"], []]}
    )
    assert other["comment"] == (
        "Turn 1: asked {'question': 'Approve refund?', 'amount': 30}, expected 'cancel'."
    )


def test_questions_ignore_checks_only_the_answers(refunds):
    evaluator = create_hitl_evaluator(questions="ignore")
    assert evaluator(outputs=refunds["approved_40"], reference_outputs=refunds["approved"])["score"]
    result = evaluator(outputs=refunds["rejected"], reference_outputs=refunds["approved"])
    assert result["comment"] == "Turn 2: answered 'reject', expected 'approve'."
    assert result["metadata"]["checked"] == {"questions": False, "answers": True}
    assert result["metadata"]["turns"][0]["questions_match"] is None


def test_a_missing_or_an_extra_question():
    asked_none = {"interrupts": [[], []], "resumes": [None, "approve"]}
    expected_one = {"interrupts": [[{"question": QUESTION}], []], "resumes": [None, "approve"]}
    result = hitl(outputs=asked_none, reference_outputs=expected_one)
    assert result["comment"] == "Turn 1: expected 1 question, the graph asked none."
    result = hitl(outputs=expected_one, reference_outputs=asked_none)
    assert result["comment"] == (
        "Turn 1: expected no questions, the graph asked 1: {'question': 'Approve refund?'}."
    )


# --------------------------------------------------------------------------- answers


def answer(approved: bool, comment: str, at: str) -> dict[str, Any]:
    return {"approved": approved, "comment": comment, "at": at}


@pytest.fixture(scope="module")
def answered() -> dict[str, ThreadTrajectory]:
    graph = refund_graph(InMemorySaver())
    return {
        "reference": refund_thread(graph, "a", answer(True, "Refund approved.", "09:00")),
        "later": refund_thread(graph, "b", answer(True, "Refund approved, see ticket.", "17:30")),
        "rejected": refund_thread(graph, "c", answer(False, "Refund approved.", "09:00")),
    }


def test_per_field_answer_rules(answered):
    reference, later = answered["reference"], answered["later"]
    result = hitl(outputs=later, reference_outputs=reference)
    assert result["comment"] == (
        "Turn 2: answered {'approved': True, 'comment': 'Refund approved, see ticket.', "
        "'at': '17:30'}, expected {'approved': True, 'comment': 'Refund approved.', "
        "'at': '09:00'} (field 'comment')."
    )
    rules = create_hitl_evaluator(answer_rules={"comment": "ignore", "at": "ignore"})
    assert rules(outputs=later, reference_outputs=reference)["score"] is True
    loose = create_hitl_evaluator(
        answer_rules={"comment": lambda actual, expected: actual.startswith(expected[:-1])},
        ignore_fields=["at"],
    )
    assert loose(outputs=later, reference_outputs=reference)["score"] is True
    strict_rule = create_hitl_evaluator(answer_rules={"comment": lambda a, e: a == e})
    assert strict_rule(outputs=later, reference_outputs=reference)["comment"].endswith(
        "(field 'comment' failed its rule)."
    )
    # A rule on one field leaves the others to `answers`: the decision still counts.
    rejected = rules(outputs=answered["rejected"], reference_outputs=reference)
    assert rejected["score"] is False
    assert rejected["comment"].endswith("(field 'approved').")


def test_subset_answers_and_a_bool_is_not_a_number(answered):
    subset = create_hitl_evaluator(answers="subset", questions="ignore")
    reference = {"resumes": [None, {"approved": True}]}
    assert subset(outputs=answered["later"], reference_outputs=reference)["score"] is True
    as_number = subset(
        outputs=answered["later"], reference_outputs={"resumes": [None, {"approved": 1}]}
    )
    assert as_number["score"] is False


def test_an_answer_where_none_was_expected():
    evaluator = create_hitl_evaluator(questions="ignore")
    result = evaluator(
        outputs={"resumes": [None, None]}, reference_outputs={"resumes": [None, "ok"]}
    )
    assert result["comment"] == "Turn 2: expected the answer 'ok', none was given."
    result = evaluator(
        outputs={"resumes": ["ok", None]}, reference_outputs={"resumes": [None, None]}
    )
    assert result["comment"] == "Turn 1: answered 'ok', expected no answer."


# --------------------------------------------------------------------------- references


def test_a_reference_carrying_interrupts_and_resumes(refunds):
    approved, rejected = refunds["approved"], refunds["rejected"]
    flat = approved.to_graph_trajectory()
    assert (flat.interrupts, flat.resumes) == (None, None)
    reference = flat.model_copy(
        update={
            "interrupts": [[{"question": QUESTION, "amount": 30}], []],
            "resumes": [None, "approve"],
        }
    )
    assert hitl(outputs=approved, reference_outputs=reference)["score"] is True
    result = hitl(outputs=rejected, reference_outputs=reference.model_dump())
    assert result["comment"] == "Turn 2: answered 'reject', expected 'approve'."
    envelope = {"inputs": reference.inputs, "outputs": reference.model_dump(exclude={"inputs"})}
    assert hitl(outputs=rejected, reference_outputs=envelope) == result
    # The graph matchers read such a reference as before.
    assert graph_trajectory_strict_match(outputs=rejected, reference_outputs=reference)["score"]
    only_answers = {"resumes": [None, "approve"]}
    assert hitl(outputs=approved, reference_outputs=only_answers)["metadata"]["checked"] == {
        "questions": False,
        "answers": True,
    }


def test_an_agentevals_reference_is_unchecked_and_unchanged(refunds):
    agentevals = {
        "inputs": [{"__start__": {"amount": 30}}, "__resuming__"],
        "results": [{}, {"amount": 30, "decision": "approve", "status": "refunded"}],
        "steps": [["__start__", "draft", "review", "__interrupt__"], ["act"]],
    }
    validated = GraphTrajectory.model_validate(agentevals)
    assert validated.model_dump(exclude_none=True) == agentevals
    assert validated == refunds["approved"].to_graph_trajectory()
    for reference in (agentevals, validated):
        strict = graph_trajectory_strict_match(
            outputs=refunds["rejected"], reference_outputs=reference
        )
        assert strict["score"] is True
        result = hitl(outputs=refunds["rejected"], reference_outputs=reference)
        assert result["score"] is None
        assert result["comment"] == (
            "Not scored: reference_outputs carries no interrupts or resumes to check."
        )


def test_turn_counts_must_agree_unless_by_thread(refunds):
    three_turns = {
        "interrupts": [[{"question": QUESTION, "amount": 30}], [], []],
        "resumes": [None, "approve", None],
    }
    result = hitl(outputs=three_turns, reference_outputs=refunds["approved"])
    assert (result["score"], result["comment"]) == (False, "Expected 2 turns, got 3.")
    assert result["metadata"]["turns"][2]["questions_match"] is False
    by_thread = create_hitl_evaluator(by="thread")
    assert by_thread(outputs=three_turns, reference_outputs=refunds["approved"])["score"] is True
    result = by_thread(outputs=refunds["rejected"], reference_outputs=refunds["approved"])
    assert result["comment"] == "The thread: answered 'reject', expected 'approve'."
    assert result["metadata"]["answers"] == ["reject"]


# --------------------------------------------------------------------------- parallel interrupts


def test_parallel_interrupts_are_compared_in_node_path_order():
    graph = parallel_graph(InMemorySaver())
    yes = {"approved": True}
    both = parallel_thread(graph, "both", legal=yes, finance=yes)
    legal_no = parallel_thread(graph, "legal-no", legal={"approved": False}, finance=yes)

    row = hitl(outputs=both, reference_outputs=both)["metadata"]["turns"]
    assert [q["reviewer"] for q in row[0]["questions"]] == ["finance", "legal"]
    assert row[1]["answer"] == [yes, yes]

    # However the thread lists its pending interrupts, the comparison is the same.
    reordered = both.model_copy(deep=True)
    reordered.turns[0].interrupts.reverse()
    assert hitl(outputs=reordered, reference_outputs=both)["score"] is True

    result = hitl(outputs=legal_no, reference_outputs=both)
    assert result["comment"] == (
        "Turn 2: answered [{'approved': True}, {'approved': False}], expected "
        "[{'approved': True}, {'approved': True}] (field '[1].approved')."
    )

    finance, legal = ({"reviewer": n, "question": f"{n} OK?"} for n in ("finance", "legal"))
    in_path_order = {"interrupts": [[finance, legal], []], "resumes": [None, [yes, yes]]}
    assert hitl(outputs=both, reference_outputs=in_path_order)["score"] is True
    swapped = {"interrupts": [[legal, finance], []]}
    result = hitl(outputs=both, reference_outputs=swapped)
    assert result["comment"].startswith(
        "Turn 1, question 1: asked {'reviewer': 'finance', 'question': 'finance OK?'}, "
        "expected {'reviewer': 'legal', 'question': 'legal OK?'} (field 'reviewer')"
    )


def test_parallel_answers_on_sqlite(sqlite_saver):
    graph = parallel_graph(sqlite_saver)
    yes, no = {"approved": True}, {"approved": False}
    reference = parallel_thread(graph, "ref", legal=yes, finance=no)
    run = parallel_thread(graph, "run", legal=yes, finance=no)
    assert hitl(outputs=run, reference_outputs=reference)["score"] is True
    rules = create_hitl_evaluator(answer_rules={"approved": "ignore"})
    flipped = parallel_thread(graph, "flipped", legal=no, finance=yes)
    assert hitl(outputs=flipped, reference_outputs=reference)["score"] is False
    assert rules(outputs=flipped, reference_outputs=reference)["score"] is True


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("outputs", "reference", "message"),
    [
        ("thread", 42, "reference_outputs is a int; expected a ThreadTrajectory (lg_eval.extract"),
        (42, "thread", "outputs is a int; expected a ThreadTrajectory"),
        (
            "thread",
            {"foo": 1},
            "reference_outputs is a dict without any of 'turns', 'inputs', 'interrupts', 'res",
        ),
        (
            "thread",
            {"interrupts": "asked"},
            "reference_outputs is not a valid GraphTrajectory: interrupts: Input should be a",
        ),
        (
            "thread",
            {"interrupts": [[]], "resumes": [None, "approve"]},
            "its turn counts differ ('interrupts' has 1, 'resumes' has 2)",
        ),
        (
            "thread",
            {"interrupts": [[]], "steps": [["a"], ["b"]]},
            "its turn counts differ ('interrupts' has 1, 'steps' has 2)",
        ),
        ({"steps": [["a"], ["b"]]}, "thread", "outputs carries no interrupts, which the reference"),
        ({"turns": [{"index": 0}]}, "thread", "outputs is not a valid ThreadTrajectory"),
        ("thread", None, "hitl_match needs reference_outputs"),
    ],
)
def test_bad_input_is_a_typed_error(refunds, outputs, reference, message):
    def value(v: Any) -> Any:
        return refunds["approved"] if v == "thread" else v

    with pytest.raises(TrajectoryFormatError) as raised:
        hitl(outputs=value(outputs), reference_outputs=value(reference))
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"questions": "fuzzy"}, "questions='fuzzy' is not allowed; use one of exact, subset"),
        (
            {"answers": "contains"},
            "answers='contains' is not allowed; use one of exact, subset, ig",
        ),
        ({"by": "node"}, "by='node' is not allowed; use one of turn, thread"),
        ({"ignore_fields": "amount"}, "ignore_fields takes a list of dotted field paths"),
        ({"ignore_fields": ["a..b"]}, "'a..b' is not a dotted field path"),
        ({"answer_rules": {"comment": "fuzzy"}}, "answer_rules['comment']='fuzzy' is not allowed"),
        ({"answer_rules": ["comment"]}, "answer_rules must map field paths to rules"),
        (
            {"answers": "ignore", "answer_rules": {"comment": "ignore"}},
            "answer_rules have no effect with answers='ignore'",
        ),
    ],
)
def test_bad_options_fail_at_creation(options, message):
    with pytest.raises(InvalidOptionError) as raised:
        create_hitl_evaluator(**options)
    assert message in str(raised.value)


# --------------------------------------------------------------------------- async


def test_aevaluate_agrees_with_the_sync_call(refunds):
    async def both() -> list[Any]:
        kwargs = {"outputs": refunds["rejected"], "reference_outputs": refunds["approved"]}
        return [await hitl.aevaluate(**kwargs), await hitl.as_async()(**kwargs)]

    sync = hitl(outputs=refunds["rejected"], reference_outputs=refunds["approved"])
    assert asyncio.run(both()) == [sync, sync]


# --------------------------------------------------------------------------- properties

payloads = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text("ab ", max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("xyz"), inner),
    max_leaves=6,
)


@st.composite
def threads(draw: st.DrawFn) -> ThreadTrajectory:
    turns: list[Turn] = []
    pending: list[InterruptRecord] = []
    for n in range(draw(st.integers(1, 4))):
        resumed = bool(pending) and draw(st.booleans())
        resume = {r.id: draw(payloads) for r in pending} if resumed else None
        count = draw(st.integers(0, 2))
        pending = [
            InterruptRecord(id=f"{n}-{k}", value=draw(payloads), path=draw(st.sampled_from("pq")))
            for k in range(count)
        ]
        turns.append(
            Turn(
                index=n,
                kind="resume" if resumed else "input",
                resume=resume,
                status="interrupted" if pending else "completed",
                interrupts=pending,
            )
        )
    return ThreadTrajectory(thread_id="t", turns=turns)


modes = st.fixed_dictionaries(
    {
        "questions": st.sampled_from(["exact", "subset", "contains", "ignore"]),
        "answers": st.sampled_from(["exact", "subset", "ignore"]),
        "by": st.sampled_from(["turn", "thread"]),
        "ignore_fields": st.lists(st.sampled_from(["x", "y.z"]), max_size=2),
    }
)

PROPERTIES = settings(max_examples=80, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


@PROPERTIES
@given(threads(), modes)
def test_a_thread_matches_itself(thread, options):
    result = create_hitl_evaluator(**options)(outputs=thread, reference_outputs=thread)
    assert result["score"] is True, result["comment"]
    assert result["comment"] is None


@PROPERTIES
@given(threads(), threads(), st.sampled_from(["turn", "thread"]))
def test_ignoring_both_always_passes(thread, other, by):
    evaluator = create_hitl_evaluator(questions="ignore", answers="ignore", by=by)
    assert evaluator(outputs=thread, reference_outputs=other)["score"] is True


@PROPERTIES
@given(threads(), st.data())
def test_ignored_questions_never_fail(thread, data):
    """Other payloads on the same turns: questions='ignore' passes, answers untouched."""
    other = thread.model_copy(deep=True)
    for turn in other.turns:
        for record in turn.interrupts:
            record.value = data.draw(payloads)
    evaluator = create_hitl_evaluator(questions="ignore")
    assert evaluator(outputs=other, reference_outputs=thread)["score"] is True


def test_the_prebuilt_agents_approval_requests(memory_saver):
    """HumanInTheLoopMiddleware: one approved, one rejected send_email on one thread."""
    thread = extract_thread(SCENARIOS["hitl_agent"].played(memory_saver), thread_config("t"))
    assert hitl(outputs=thread, reference_outputs=thread)["score"] is True
    approve, reject = {"type": "approve"}, {"type": "reject"}
    questions = [[{"action_requests": [{"name": "send_email"}]}], []] * 2
    reference = {
        "interrupts": questions,
        "resumes": [None, {"decisions": [approve]}, None, {"decisions": [approve]}],
    }
    evaluator = create_hitl_evaluator(questions="subset", answers="subset")
    result = evaluator(outputs=thread, reference_outputs=reference)
    assert result["comment"] == (
        "Turn 4: answered {'decisions': [{'type': 'reject', 'message': 'Do not email the whole "
        "company.'}]}, expected {'decisions': [{'type': 'approve'}]} (field 'decisions[0].type')."
    )
    reference["resumes"][3] = {"decisions": [reject]}
    assert evaluator(outputs=thread, reference_outputs=reference)["score"] is True
    described = create_hitl_evaluator(ignore_fields=["action_requests.description"])
    turn = described(outputs=thread, reference_outputs=thread)["metadata"]["turns"][0]
    assert "description" not in turn["questions"][0]["action_requests"][0]
