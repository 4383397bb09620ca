"""``hitl_policy``: approval policies held on real agents' threads.

The travel agent (:mod:`tests.travel`: ``create_agent`` + ``HumanInTheLoopMiddleware``
gating ``book_flight``, on a SQLite file) is played by LangGraph, and its tools log what
they really ran; the policy's verdict is held to that log and to the answers the test gave,
never to lg_eval's own reading. The create_agent HITL threads of :mod:`tests.hitl_agents`
and :mod:`tests.thirdparty.agents` must pass as they are.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from graphs.scenarios import drive
from lg_eval import extract_thread
from lg_eval._feedback import FeedbackDict
from lg_eval._trajectory import GraphTrajectory
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import (
    ArgBound,
    create_approval_policy_evaluator,
    get_evaluator,
    needs_reference,
)
from lg_eval.experiments import run_experiment
from lg_eval.nodes import EvalNode, Evaluations
from lg_eval.replay import replay_threads
from tests import hitl_agents, travel
from tests.thirdparty import agents as thirdparty

BOOK = {"name": "book_flight", "args": travel.MORNING, "id": "c-book"}


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    """A SqliteSaver on a file, as the newcomer's agent has."""
    conn = sqlite3.connect(tmp_path / "travel.sqlite", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


def _judged(graph: Any, thread_id: str, **options: Any) -> FeedbackDict:
    options.setdefault("require_approval", ["book_flight"])
    thread = extract_thread(graph, {"configurable": {"thread_id": thread_id}})
    return get_evaluator("hitl_policy", **options)(outputs=thread)


def _travel(saver: SqliteSaver, answers: list[Command], **regression: Any) -> tuple[Any, list]:
    log: travel.Log = []
    graph = travel.agent(log, checkpointer=saver, **regression)
    travel.play(graph, "trip", answers)
    return graph, log


# --------------------------------------------------------------------------- the travel agent


@pytest.mark.parametrize(
    ("answer", "booked"),
    [
        (travel.APPROVE, [travel.MORNING]),
        (
            travel.edit(flight="TP 1357", price=95),
            [{**travel.MORNING, "flight": "TP 1357", "price": 95}],
        ),
        (travel.REJECT, []),
    ],
    ids=["approve", "edit", "reject"],
)
def test_the_travel_agent_keeps_its_policy_whatever_the_human_decides(
    saver: SqliteSaver, answer: Command, booked: list[dict[str, Any]]
) -> None:
    graph, log = _travel(saver, [answer])
    assert log == booked
    verdict = _judged(graph, "trip", bounds=["book_flight.price <= approved"])
    assert verdict["score"] is True
    assert verdict["metadata"] is not None
    assert verdict["metadata"]["violations"] == []
    assert (verdict["metadata"]["executed"], verdict["metadata"]["gated"]) == (
        1 + len(booked),
        len(booked),
    )


def test_a_booking_without_approval_is_caught_at_its_turn_and_call(saver: SqliteSaver) -> None:
    graph, log = _travel(saver, [travel.APPROVE], gate=False)  # the search was gated instead
    assert log == [travel.MORNING]
    verdict = _judged(graph, "trip")
    assert verdict["score"] is False
    assert verdict["comment"] == (
        'Turn 2: book_flight(flight="TP 1351", seat="economy", price=180) ran without an approval.'
    )
    assert verdict["metadata"] is not None
    assert verdict["metadata"]["violations"] == [
        {"rule": "approval", "turn": 1, "position": 1, "call": BOOK,
         "detail": "ran without an approval"},
    ]  # fmt: skip


def test_a_booking_with_other_arguments_than_approved_is_caught(saver: SqliteSaver) -> None:
    graph, log = _travel(saver, [travel.APPROVE], upgrade=True)
    ran = {**travel.MORNING, "seat": "business", "price": 420}
    assert log == [ran]
    verdict = _judged(graph, "trip", bounds="book_flight.price <= approved")
    assert verdict["score"] is False
    assert verdict["comment"] == (
        'Turn 2: book_flight(flight="TP 1351", seat="business", price=420) ran with other '
        'arguments than approved in turn 2 (book_flight(flight="TP 1351", seat="economy", '
        "price=180)). (1 more violation(s).)"
    )
    assert verdict["metadata"] is not None
    assert [(v["rule"], v["turn"], v["detail"]) for v in verdict["metadata"]["violations"]] == [
        ("arguments", 1, 'ran with other arguments than approved in turn 2 '
                         '(book_flight(flight="TP 1351", seat="economy", price=180))'),
        ("bound", 1, "broke book_flight.price <= approved (price = 420, bound 180)"),
    ]  # fmt: skip
    assert _judged(graph, "trip", same_arguments=False)["score"] is True


def test_a_booking_after_a_rejection_is_caught(saver: SqliteSaver) -> None:
    graph, log = _travel(saver, [travel.REJECT], ask_once=True, again=True)
    assert log == [travel.MORNING]  # the second proposal ran, unreviewed
    verdict = _judged(graph, "trip")
    assert verdict["score"] is False
    assert verdict["comment"] == (
        'Turn 2: book_flight(flight="TP 1351", seat="economy", price=180) ran after the human '
        'rejected book_flight(flight="TP 1351", seat="economy", price=180) in turn 2. '
        "(1 more violation(s).)"
    )
    assert verdict["metadata"] is not None
    rules = [(v["rule"], v["call"]["id"]) for v in verdict["metadata"]["violations"]]
    assert rules == [("rejection", "c-book-2"), ("approval", "c-book-2")]
    # without the approval rule, the rejection rule alone still catches it
    alone = _judged(graph, "trip", require_approval=[])
    assert alone["score"] is False
    assert _judged(graph, "trip", require_approval=[], after_rejection="off")["score"] is True


def test_a_constant_bound_holds_every_run_of_the_tool(saver: SqliteSaver) -> None:
    graph, _ = _travel(saver, [travel.APPROVE])
    assert _judged(graph, "trip", bounds=["book_flight.price <= 200"])["score"] is True
    capped = _judged(graph, "trip", require_approval=[], bounds=["book_flight.price < 100"])
    assert capped["comment"] == (
        'Turn 2: book_flight(flight="TP 1351", seat="economy", price=180) broke '
        "book_flight.price < 100.0 (price = 180, bound 100)."
    )


# --------------------------------------------------------------------------- create_agent HITL


@pytest.mark.parametrize("mode", hitl_agents.MODES)
@pytest.mark.parametrize("build", [hitl_agents.agent, hitl_agents.nested], ids=["agent", "nested"])
def test_the_tidy_agents_threads_keep_the_policy(
    saver: SqliteSaver, mode: hitl_agents.Mode, build: Any
) -> None:
    log: hitl_agents.Log = []
    graph = build(log, mode=mode, checkpointer=saver)
    drive(graph, "tidy", hitl_agents.steps(hitl_agents.TIDY))
    # the reviewer edited the write, rejected report.txt and approved tmp.txt
    assert log == [("write_file", {"path": "b.txt", "text": "hello"}),
                   ("delete_file", {"path": "tmp.txt"})]  # fmt: skip
    verdict = _judged(graph, "tidy", require_approval=["write_file", "delete_file"])
    assert verdict["score"] is True
    assert verdict["metadata"] is not None
    assert verdict["metadata"]["gated"] == 2


def test_a_tidy_agent_gating_only_writes_deletes_files_unapproved(saver: SqliteSaver) -> None:
    log: hitl_agents.Log = []
    review = hitl_agents.HumanInTheLoopMiddleware({"write_file": True})
    graph = hitl_agents.agent(log, checkpointer=saver, review=review)
    drive(graph, "tidy", hitl_agents.steps(hitl_agents.TIDY, resumes=1))
    # the three calls of one message run in parallel: which finished first is not the point
    assert sorted(name for name, _ in log) == ["delete_file", "delete_file", "write_file"]
    verdict = _judged(graph, "tidy", require_approval=["write_file", "delete_file"])
    assert verdict["metadata"] is not None
    assert [
        (v["rule"], v["turn"], v["call"]["args"]) for v in verdict["metadata"]["violations"]
    ] == [
        ("approval", 1, {"path": "report.txt"}),
        ("approval", 1, {"path": "tmp.txt"}),
    ]


@pytest.mark.parametrize(
    ("build", "turns", "gated"),
    [
        (thirdparty.build_middleware_agent, thirdparty.MIDDLEWARE_TURNS, 3),
        (thirdparty.build_per_call_agent, thirdparty.PER_CALL_TURNS, 1),
    ],
    ids=["middleware", "per_call"],
)
def test_the_create_agent_hitl_threads_keep_the_policy(
    saver: SqliteSaver, build: Any, turns: Any, gated: int
) -> None:
    graph = build(saver)
    drive(graph, "t", turns)
    verdict = _judged(graph, "t", require_approval=["send_email", "delete_file"])
    assert verdict["score"] is True
    assert verdict["metadata"] is not None
    assert verdict["metadata"]["gated"] == gated


# --------------------------------------------------------------------------- hosts


def test_a_golden_dataset_names_the_policy_with_its_options(tmp_path: Path) -> None:
    dataset = tmp_path / "trips.yaml"
    dataset.write_text(
        """\
name: trips
evaluators:
  - name: hitl_policy
    options: {require_approval: [book_flight], bounds: ["book_flight.price <= approved"]}
cases:
  - id: approved
    turns:
      - input: {messages: [{role: user, content: "Book the morning flight to Lisbon."}]}
      - resume: {decisions: [{type: approve}]}
"""
    )
    kw: dict[str, Any] = {"checkpointer": f"sqlite:///{tmp_path / 'c.sqlite'}", "concurrency": 1}
    good = run_experiment(travel.graph, dataset, store=tmp_path / "a.sqlite", **kw)
    bad = run_experiment(travel.upgraded, dataset, store=tmp_path / "b.sqlite", **kw)
    assert [r.score_of("hitl_policy") for r in good.results] == [True]
    assert [(r.status, r.score_of("hitl_policy")) for r in bad.results] == [("failed", False)]


def test_a_replay_onto_the_regressed_agent_fails_the_policy_the_original_kept(
    saver: SqliteSaver,
) -> None:
    travel.play(travel.agent([], checkpointer=saver), "prod-1", [travel.APPROVE])
    result = replay_threads(
        travel.upgraded, saver, baseline=travel.graph, evaluators=[travel.policy]
    )
    [replayed] = result.threads
    assert [(s.key, s.old, s.new) for s in replayed.scores] == [("hitl_policy", 1.0, 0.0)]


class _Refunds(MessagesState):
    evaluations: Evaluations


def _refund_graph(*, obey: bool, saver: SqliteSaver) -> Any:
    """A hand-written agent: it proposes a refund, asks per call, runs the tool (only if
    approved, unless ``obey`` is off) and audits itself with an eval node."""
    call = {"name": "refund", "args": {"amount": 80}, "id": "r-1"}

    def propose(state: _Refunds) -> dict[str, Any]:
        return {"messages": [AIMessage("", tool_calls=[call], id="ai-1")]}

    def review(state: _Refunds) -> Command:  # type: ignore[type-arg]
        answer = interrupt({"type": "tool_approval", "tool_call_id": "r-1", **call})
        go = answer.get("type") == "approve" or not obey
        return Command(goto="refund" if go else "audit")

    def refund(state: _Refunds) -> dict[str, Any]:
        return {"messages": [ToolMessage("refunded 80", tool_call_id="r-1", name="refund")]}

    builder = StateGraph(_Refunds)
    builder.add_node("propose", propose)
    builder.add_node("review", review, destinations=("refund", "audit"))
    builder.add_node("refund", refund)
    policy = create_approval_policy_evaluator(require_approval="refund")
    builder.add_node("audit", EvalNode([policy], source="thread", graph=lambda: graph))
    builder.add_edge(START, "propose")
    builder.add_edge("propose", "review")
    builder.add_edge("refund", "audit")
    builder.add_edge("audit", END)
    graph = builder.compile(checkpointer=saver)
    return graph


@pytest.mark.parametrize(("obey", "score"), [(True, True), (False, False)])
def test_an_eval_node_audits_its_own_thread_with_the_policy(
    saver: SqliteSaver, obey: bool, score: bool
) -> None:
    graph = _refund_graph(obey=obey, saver=saver)
    config: Any = {"configurable": {"thread_id": f"refund-{obey}"}}
    graph.invoke({"messages": [("user", "Refund my order.")]}, config)
    final = graph.invoke(Command(resume={"type": "reject"}), config)
    [audit] = final["evaluations"]
    assert (audit["key"], audit["score"]) == ("hitl_policy", score)


# --------------------------------------------------------------------------- options


def test_the_policy_needs_no_reference_and_reads_only_threads() -> None:
    assert needs_reference("hitl_policy") is False
    flat = get_evaluator("hitl_policy")(outputs=GraphTrajectory(steps=[["agent"]]))
    assert flat["score"] is None
    assert flat["comment"] is not None and "reads a thread" in flat["comment"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"require_approval": 3}, "hitl_policy: require_approval=3: a tool name or a list of"),
        ({"after_rejection": "never"}, "after_rejection='never': input should be 'call', 'tool'"),
        ({"bounds": ["refund.amount <="]}, "'refund.amount <=' is no bound"),
        ({"bounds": ["refund.amount <= lots"]}, "neither a number nor 'approved'"),
        ({"colour": "red"}, "does not take these options"),
        ({"decision": "approve"}, "decision must be a function"),
    ],
)
def test_bad_options_are_refused_naming_them(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidOptionError) as raised:
        get_evaluator("hitl_policy", **options)
    assert message in str(raised.value)


@given(
    st.one_of(
        st.none(), st.integers(), st.text(max_size=12), st.lists(st.text(max_size=6), max_size=3)
    ),
    st.one_of(st.none(), st.text(max_size=20), st.lists(st.text(max_size=20), max_size=2)),
    st.one_of(st.sampled_from(["call", "tool", "off"]), st.text(max_size=5), st.integers()),
)
def test_any_option_values_build_an_evaluator_or_raise_a_typed_error(
    tools: Any, bounds: Any, after: Any
) -> None:
    try:
        built = create_approval_policy_evaluator(
            require_approval=tools, bounds=bounds, after_rejection=after
        )
    except InvalidOptionError:
        return
    assert built.key == "hitl_policy"


@given(
    st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
    st.from_regex(r"[a-z_]{1,8}(\.[a-z_]{1,8}){0,2}", fullmatch=True),
    st.sampled_from(["<=", "<", ">=", ">", "=="]),
    st.one_of(st.just("approved"), st.floats(allow_nan=False, allow_infinity=False, width=32)),
)
def test_a_bound_reads_back_from_its_own_text(tool: str, arg: str, op: str, bound: Any) -> None:
    parsed = ArgBound(tool=tool, arg=arg, op=op, bound=bound)  # type: ignore[arg-type]
    assert ArgBound.parse(str(parsed)) == parsed
