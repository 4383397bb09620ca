"""Graph trajectory match: agentevals' strict evaluator, more modes, and shaping options."""

from __future__ import annotations

import pytest
from agentevals.graph_trajectory.strict import (
    graph_trajectory_strict_match as agentevals_strict,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from lg_eval._trajectory import (
    GraphTrajectory,
    InterruptRecord,
    Superstep,
    TaskRun,
    ThreadTrajectory,
    Turn,
)
from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.evaluators import (
    create_graph_trajectory_match_evaluator,
    graph_trajectory_strict_match,
    graph_trajectory_strict_match_async,
)

MODES = ("strict", "unordered", "subset", "superset", "prefix")


def steps(*turns):
    return {"results": [], "steps": [list(turn) for turn in turns]}


def match(mode, outputs, reference, **options):
    evaluator = create_graph_trajectory_match_evaluator(trajectory_match_mode=mode, **options)
    return evaluator(outputs=outputs, reference_outputs=reference)


# --------------------------------------------------------------------------- agentevals parity

node_names = st.sampled_from(["__start__", "agent", "tools", "__interrupt__", "sub:inner"])
trajectories = st.lists(st.lists(node_names, max_size=4), max_size=3)


@settings(max_examples=200, deadline=None)
@given(trajectories, trajectories)
def test_strict_match_scores_exactly_like_agentevals(actual, reference):
    outputs, expected = steps(*actual), steps(*reference)
    ours = graph_trajectory_strict_match(outputs=outputs, reference_outputs=expected)
    theirs = agentevals_strict(outputs=outputs, reference_outputs=expected)
    assert ours["key"] == theirs["key"] == "graph_trajectory_strict_match"
    assert ours["score"] == theirs["score"]


def test_agentevals_readme_example_matches():
    reference = {
        "results": [],
        "steps": [["__start__", "agent", "tools", "__interrupt__"], ["agent"]],
    }
    extracted = {"inputs": [{"__start__": {}}, "__resuming__"], "outputs": reference}
    result = graph_trajectory_strict_match(
        outputs=extracted["outputs"], reference_outputs=reference
    )
    assert result["score"] is True and result["comment"] is None


async def test_strict_match_async_twin():
    result = await graph_trajectory_strict_match_async(
        outputs=steps(["a"]), reference_outputs=steps(["b"])
    )
    assert result["key"] == "graph_trajectory_strict_match" and result["score"] is False


# --------------------------------------------------------------------------- modes per turn

REFERENCE = steps(["__start__", "agent", "tools"], ["agent"])


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        (steps(["__start__", "agent", "tools"], ["agent"]), dict.fromkeys(MODES, True)),
        (
            steps(["__start__", "tools", "agent"], ["agent"]),
            {"strict": False, "unordered": True, "subset": True, "superset": True, "prefix": False},
        ),
        (
            steps(["__start__", "agent", "tools", "retriever"], ["agent"]),
            {
                "strict": False,
                "unordered": False,
                "subset": False,
                "superset": True,
                "prefix": False,
            },
        ),
        (
            steps(["__start__", "agent"]),
            {
                "strict": False,
                "unordered": False,
                "subset": True,
                "superset": False,
                "prefix": True,
            },
        ),
        (
            steps(["__start__", "planner", "executor"]),
            dict.fromkeys(MODES, False),
        ),
    ],
    ids=["identical", "reordered", "extra-node", "fewer-nodes", "different"],
)
def test_each_mode_per_turn(actual, expected):
    got = {mode: match(mode, actual, REFERENCE)["score"] for mode in MODES}
    assert got == expected


@pytest.mark.parametrize("mode", MODES)
def test_both_empty_match_in_every_mode(mode):
    assert match(mode, steps(), steps())["score"] is True
    assert match(mode, steps(), steps(), scope="thread")["score"] is True


def test_per_turn_scope_counts_turns_thread_scope_does_not():
    actual = steps(["__start__", "agent", "tools"], ["agent"])
    reference = steps(["__start__", "agent", "tools", "agent"])
    assert match("unordered", actual, reference)["score"] is False
    assert match("unordered", actual, reference)["comment"] == "Expected 1 turns, got 2."
    assert match("unordered", actual, reference, scope="thread")["score"] is True
    assert match("strict", actual, reference, scope="thread")["score"] is True


def test_duplicates_are_counted():
    three = steps(["agent", "tools", "agent", "agent"])
    two = steps(["agent", "tools", "agent"])
    assert match("unordered", two, three)["score"] is False
    assert match("superset", three, two)["score"] is True
    assert match("subset", three, two)["metadata"]["unexpected"] == ["agent"]


def test_subset_allows_skipped_turns_superset_allows_extra_turns():
    assert match("subset", steps(["a"]), steps(["a"], ["b"]))["score"] is True
    assert match("superset", steps(["a"], ["b"]), steps(["a"]))["score"] is True
    assert match("superset", steps(["a"]), steps(["a"], ["b"]))["score"] is False


def test_prefix_accepts_a_paused_thread_that_followed_the_reference():
    reference = steps(["__start__", "agent", "tools", "__interrupt__"], ["tools", "agent"])
    paused = steps(["__start__", "agent", "tools", "__interrupt__"])
    halfway = steps(["__start__", "agent", "tools", "__interrupt__"], ["tools"])
    assert match("prefix", paused, reference)["score"] is True
    assert match("prefix", halfway, reference)["score"] is True
    assert match("prefix", steps(), reference)["score"] is True


def test_prefix_rejects_a_detour_or_a_longer_run():
    reference = steps(["__start__", "agent", "tools"], ["agent"])
    detour = match("prefix", steps(["__start__", "tools"]), reference)
    assert detour["score"] is False
    assert detour["comment"] == "Turn 1: step 2 differs: expected 'agent', got 'tools'."
    unfinished_first = match("prefix", steps(["__start__", "agent"], ["agent"]), reference)
    assert unfinished_first["score"] is False
    longer = match("prefix", steps(["a"], ["b"], ["c"]), reference)
    assert longer["comment"] == "The run has 3 turns but the reference only 2."


def test_strict_comment_names_the_turn_and_step():
    result = match("strict", steps(["__start__", "agent"], ["agent", "tools"]), REFERENCE)
    assert result["comment"] == (
        "Turn 1: step 3 missing: expected 'tools', the run stopped. (1 more turn(s) differ.)"
    )
    assert result["metadata"]["turns"][0]["first_difference"] == 2


def test_multiset_comment_lists_missing_and_unexpected_nodes():
    result = match("unordered", steps(["__start__", "agent", "search"], ["agent"]), REFERENCE)
    assert result["comment"] == "Turn 1: missing 'tools'; unexpected 'search'."
    assert result["metadata"]["missing"] == ["tools"]
    assert result["metadata"]["unexpected"] == ["search"]


# --------------------------------------------------------------------------- shaping options


def test_ignore_nodes_drops_start_and_interrupt_markers_also_inside_subgraphs():
    actual = steps(["__start__", "agent", "sub", "sub:__start__", "sub:x", "__interrupt__"])
    reference = steps(["agent", "sub", "sub:x"])
    assert match("strict", actual, reference)["score"] is False
    assert match("strict", actual, reference, ignore_nodes=["__start__", "__interrupt__"])["score"]


def test_ignore_pattern_is_a_full_match_on_path_or_name():
    actual = steps(["__start__", "agent", "log_step", "tools"])
    reference = steps(["agent", "tools"])
    assert match("strict", actual, reference, ignore_pattern=r"__\w+__|log_.*")["score"] is True
    assert match("strict", actual, reference, ignore_pattern=r"log")["score"] is False


def test_subgraph_steps_can_be_kept_dropped_or_stripped():
    actual = steps(["outer", "inner", "inner:a", "inner:b"])
    assert match("strict", actual, steps(["outer", "inner"]), subgraphs="drop")["score"] is True
    assert match("strict", actual, steps(["outer", "inner", "a", "b"]), subgraphs="strip")["score"]
    assert match("strict", actual, steps(["outer", "inner", "a", "b"]))["score"] is False


def task(name, path=None, subgraph=None, paused=False):
    return TaskRun(
        name=name,
        path=path or name,
        subgraph=subgraph or [],
        interrupts=[InterruptRecord(value="?")] if paused else [],
    )


def fan_out_thread() -> ThreadTrajectory:
    inner = [Superstep(step=0, tasks=[task("q", "search_db:q")])]
    supersteps = [
        Superstep(step=0, tasks=[task("__start__")]),
        Superstep(step=1, tasks=[task("search_web"), task("search_db", subgraph=inner)]),
        Superstep(step=2, tasks=[task("merge")]),
    ]
    turn = Turn(index=0, kind="input", status="completed", supersteps=supersteps)
    return ThreadTrajectory(thread_id="t", turns=[turn])


def test_thread_trajectory_flattens_like_its_graph_trajectory():
    thread = fan_out_thread()
    flat = thread.to_graph_trajectory()
    assert match("strict", thread, flat)["score"] is True
    assert match("strict", thread, flat.model_dump())["score"] is True


def test_supersteps_as_sets_let_parallel_siblings_come_in_any_order():
    reference = steps(["__start__", "search_db", "search_db:q", "search_web", "merge"])
    thread = fan_out_thread()
    assert match("strict", thread, reference)["score"] is False
    assert match("strict", thread, reference, supersteps_as_sets=True)["score"] is True


def test_supersteps_as_sets_keep_a_subgraph_with_its_parent():
    torn = steps(["__start__", "search_db", "search_web", "search_db:q", "merge"])
    assert match("strict", fan_out_thread(), torn, supersteps_as_sets=True)["score"] is False


def test_supersteps_as_sets_do_not_let_steps_cross_supersteps():
    crossed = steps(["__start__", "merge", "search_db", "search_db:q", "search_web"])
    assert match("strict", fan_out_thread(), crossed, supersteps_as_sets=True)["score"] is False


def test_supersteps_as_sets_with_structure_on_both_sides():
    other = fan_out_thread()
    other.turns[0].supersteps[1].tasks.reverse()
    assert match("strict", fan_out_thread(), other)["score"] is False
    assert match("strict", fan_out_thread(), other, supersteps_as_sets=True)["score"] is True


def test_supersteps_as_sets_with_stripped_subgraph_names():
    reference = steps(["search_db", "q", "search_web", "merge"])
    options = {"supersteps_as_sets": True, "subgraphs": "strip", "ignore_nodes": ["__start__"]}
    assert match("strict", fan_out_thread(), reference, **options)["score"] is True


def test_resumed_option_lists_rerun_paused_nodes():
    paused = Turn(
        index=0,
        kind="input",
        status="interrupted",
        supersteps=[
            Superstep(step=0, tasks=[task("__start__")]),
            Superstep(step=1, tasks=[task("ask", paused=True)]),
        ],
    )
    resumed_task = task("ask")
    resumed_task.resumed = True
    resumed = Turn(
        index=1,
        kind="resume",
        status="completed",
        supersteps=[
            Superstep(step=2, tasks=[resumed_task]),
            Superstep(step=3, tasks=[task("answer")]),
        ],
    )
    thread = ThreadTrajectory(thread_id="t", turns=[paused, resumed])
    omit = steps(["__start__", "ask", "__interrupt__"], ["answer"])
    repeat = steps(["__start__", "ask", "__interrupt__"], ["ask", "answer"])
    assert match("strict", thread, omit)["score"] is True
    assert match("strict", thread, repeat, resumed="repeat")["score"] is True


# --------------------------------------------------------------------------- shapes & options


@pytest.mark.parametrize(
    "outputs",
    [
        GraphTrajectory(steps=[["__start__", "agent", "tools"], ["agent"]]),
        {"inputs": [], "outputs": REFERENCE},
        [["__start__", "agent", "tools"], ["agent"]],
    ],
    ids=["model", "envelope", "bare-lists"],
)
def test_accepted_shapes(outputs):
    assert match("strict", outputs, REFERENCE)["score"] is True


def test_a_flat_list_of_names_is_refused_with_the_per_turn_shape():
    with pytest.raises(TrajectoryFormatError, match=r"outputs is a flat list of node names"):
        match("strict", ["a", "b"], steps(["a", "b"]))
    assert match("strict", [["a", "b"]], steps(["a", "b"]))["score"] is True


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"results": []}, "dict without 'steps'"),
        ({"steps": [["a", 1]]}, r"\['steps'\]\[0\] must be a list of node names"),
        ({"steps": "abc"}, "must be a list of per-turn lists"),
        (42, "outputs is a int"),
    ],
)
def test_shape_errors_name_the_argument(value, fragment):
    with pytest.raises(TrajectoryFormatError, match=fragment):
        match("strict", value, REFERENCE)


def test_missing_reference_is_an_error():
    with pytest.raises(TrajectoryFormatError, match="needs reference_outputs"):
        graph_trajectory_strict_match(outputs=REFERENCE)


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"trajectory_match_mode": "fuzzy"}, "strict, unordered, subset, superset, prefix"),
        ({"scope": "session"}, "turn, thread"),
        ({"subgraphs": "flatten"}, "keep, drop, strip"),
        ({"resumed": "twice"}, "omit, repeat"),
        ({"ignore_pattern": "("}, "not a valid regular expression"),
        ({"scop": "turn"}, "Unknown option.*accept scope, supersteps_as_sets"),
    ],
)
def test_bad_options_fail_at_creation(options, fragment):
    with pytest.raises(InvalidOptionError, match=fragment):
        create_graph_trajectory_match_evaluator(**options)


async def test_async_factory_twin():
    evaluator = create_graph_trajectory_match_evaluator(trajectory_match_mode="superset").as_async()
    result = await evaluator(outputs=steps(["a", "b"]), reference_outputs=steps(["b"]))
    assert result == {
        "key": "graph_trajectory_superset_match",
        "score": True,
        "comment": None,
        "metadata": result["metadata"],
    }


def test_supersteps_as_sets_around_turn_level_markers():
    """A functional-API turn gets ``__start__`` inserted and a breakpoint adds
    ``__interrupt__``: both stay outside the sibling sets."""
    turn = Turn(
        index=0,
        kind="input",
        status="interrupted",
        breakpoint=True,
        supersteps=[Superstep(step=0, tasks=[task("a"), task("b")])],
    )
    thread = ThreadTrajectory(thread_id="t", turns=[turn])
    assert thread.to_graph_trajectory().steps == [["__start__", "a", "b", "__interrupt__"]]
    reference = steps(["__start__", "b", "a", "__interrupt__"])
    assert match("strict", thread, reference, supersteps_as_sets=True)["score"] is True
    misplaced = steps(["b", "__start__", "a", "__interrupt__"])
    assert match("strict", thread, misplaced, supersteps_as_sets=True)["score"] is False
