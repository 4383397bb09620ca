"""Target forms: compiled graphs, builders, factories, and 'module:attr' references."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel
from typing_extensions import TypedDict

from graphs import functional, weather
from lg_eval.errors import InvalidOptionError
from lg_eval.play import import_reference, resolve_target


class Counter(TypedDict):
    n: int


def increment(state: Counter) -> dict[str, Any]:
    return {"n": state["n"] + 1}


def make_builder() -> StateGraph[Counter]:
    builder = StateGraph(Counter)
    builder.add_node("increment", increment)
    builder.add_edge(START, "increment")
    builder.add_edge("increment", END)
    return builder


BUILDER = make_builder()
COMPILED = make_builder().compile()
NOT_A_GRAPH = 42


def builder_factory(checkpointer: Any = None) -> StateGraph[Counter]:
    return make_builder()


def bad_factory(checkpointer: Any = None) -> str:
    return "nope"


def no_kwargs_factory() -> Pregel:
    return COMPILED


@pytest.mark.parametrize(
    "target",
    [
        COMPILED,
        BUILDER,
        builder_factory,
        "tests.play.test_targets:COMPILED",
        "tests.play.test_targets:BUILDER",
        "tests.play.test_targets:builder_factory",
    ],
    ids=["compiled", "builder", "factory", "ref-compiled", "ref-builder", "ref-factory"],
)
def test_every_target_form_is_bound_to_the_checkpointer(target: Any) -> None:
    saver = InMemorySaver()
    graph = resolve_target(target, saver)
    assert graph.checkpointer is saver
    config = {"configurable": {"thread_id": "t"}}
    assert graph.invoke({"n": 1}, config) == {"n": 2}
    assert graph.get_state(config).values == {"n": 2}


def test_a_compiled_graph_is_copied_not_changed() -> None:
    saver = InMemorySaver()
    graph = resolve_target(COMPILED, saver)
    assert graph is not COMPILED and COMPILED.checkpointer is None


def test_example_factories_and_functional_graphs_resolve() -> None:
    saver = InMemorySaver()
    assert resolve_target("graphs.weather:build", saver).checkpointer is saver
    assert resolve_target(weather.build, saver).checkpointer is saver
    entry = functional.build()
    assert resolve_target(entry, saver).checkpointer is saver


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("graphs.weather", "is not a 'module:attr' reference"),
        (
            "no_such_module_xyz:build",
            "importing module 'no_such_module_xyz' failed with "
            "ModuleNotFoundError: No module named 'no_such_module_xyz' (is the directory holding "
            "it on sys.path? run from the project root).",
        ),
        ("graphs.weather:nope", "module 'graphs.weather' has no attribute 'nope'."),
        (
            "tests.play.test_targets:NOT_A_GRAPH",
            "target 'tests.play.test_targets:NOT_A_GRAPH' is a int; give a compiled graph",
        ),
        ("tests.play.test_targets:bad_factory", "the factory returned a str, not a compiled graph"),
        (
            "tests.play.test_targets:no_kwargs_factory",
            "calling it as a factory, factory(checkpointer=...), failed with TypeError",
        ),
    ],
)
def test_bad_references_are_typed_errors_naming_the_reference(target: str, message: str) -> None:
    with pytest.raises(InvalidOptionError) as info:
        resolve_target(target, InMemorySaver())
    assert message in str(info.value)


def test_code_is_refused_without_allow_code_and_nothing_is_imported() -> None:
    with pytest.raises(InvalidOptionError) as info:
        resolve_target("tests.play.never_imported:build", InMemorySaver(), allow_code=False)
    assert str(info.value) == (
        "target 'tests.play.never_imported:build' names code, and this dataset does not allow "
        "code (it was not loaded from a local file). Pass allow_code=True if you trust where it "
        "came from."
    )
    with pytest.raises(InvalidOptionError, match="evaluators\\[0\\] 'pkg:ev' names code"):
        import_reference("pkg:ev", what="evaluators[0]", allow_code=False)
    assert resolve_target(COMPILED, InMemorySaver(), allow_code=False) is not None
