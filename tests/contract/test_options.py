"""Options are checked where they are given, each by one contract (:mod:`lg_eval._arguments`,
:data:`lg_eval._feedback.Threshold`), and refused with an :class:`InvalidOptionError`
naming the argument: thresholds in every host (a NaN minimum would fail every numeric
score silently, a string would raise deep inside the first verdict), then every other
option of ``run_experiment`` (its ``RunOptions``, validated by pydantic where the run is
called) and ``sweep_threads`` against generated values of every type."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from lg_eval._feedback import checked_thresholds
from lg_eval.errors import DatasetError, InvalidOptionError
from lg_eval.experiments import RunOptions, run_experiment
from lg_eval.langsmith import pass_rate
from lg_eval.nodes import EvalSpec, create_evaluation_graph, route_on_score
from lg_eval.sweeps import sweep_threads
from tests.contract.contract import fuzz
from tests.contract.strategies import garbage


def scorer(*, outputs: Any, **_: Any) -> dict[str, Any]:
    return {"key": "k", "score": 1.0}


finite = st.one_of(st.integers(-(10**12), 10**12), st.floats(allow_nan=False, allow_infinity=False))
not_a_number = st.one_of(
    st.just(math.nan),
    st.just(math.inf),
    st.just(-math.inf),
    st.just(10**400),
    st.booleans(),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)

# one host per place a threshold is given; each takes the value and builds
HOSTS: dict[str, tuple[str, Callable[[Any], object]]] = {
    "EvalSpec": ("EvalSpec threshold=", lambda t: EvalSpec(scorer, threshold=t)),
    "evaluation graph": ("threshold=", lambda t: create_evaluation_graph([scorer], threshold=t)),
    "review": (
        "review_threshold=",
        lambda t: create_evaluation_graph([scorer], review_threshold=t),
    ),
    "route": ("threshold=", lambda t: route_on_score(t, passed="a", failed="b")),
    "summary": ("threshold=", lambda t: pass_rate(scorer, threshold=t)),
    "run": (
        "thresholds['k']=",
        lambda t: run_experiment("m:g", "missing.yaml", thresholds={"k": t}),
    ),
    "sweep": ("thresholds['k']=", lambda t: sweep_threads("m:g", None, thresholds={"k": t})),
}


@pytest.mark.parametrize("host", sorted(HOSTS))
@given(value=not_a_number)
def test_every_host_refuses_a_threshold_that_is_no_finite_number(host: str, value: Any) -> None:
    named, build = HOSTS[host]
    with pytest.raises(InvalidOptionError, match="^" + re.escape(named)) as raised:
        build(value)
    assert re.search("(use|should be) a (finite|valid) number", str(raised.value))


@given(value=finite)
def test_a_finite_threshold_is_kept_as_a_float(value: int | float) -> None:
    assert checked_thresholds({"judge": value}) == {"judge": float(value)}
    run_options = TypeAdapter(RunOptions).validate_python({"thresholds": {"k": value}})
    assert run_options["thresholds"] == {"k": float(value)}
    assert EvalSpec(scorer, threshold=value).threshold == float(value)
    assert isinstance(EvalSpec(scorer, threshold=value).threshold, float)


def test_none_is_no_threshold_where_a_threshold_is_optional_and_refused_inside_a_mapping() -> None:
    assert checked_thresholds(None) == {}
    assert EvalSpec(scorer).threshold is None
    with pytest.raises(InvalidOptionError, match=r"^thresholds\['k'\]=None: input should"):
        run_experiment("m:g", "missing.yaml", thresholds={"k": None})
    with pytest.raises(InvalidOptionError, match=r"^threshold=None: use a finite number"):
        pass_rate(scorer, threshold=None)


@pytest.mark.parametrize(
    ("value", "in_a_run", "in_a_sweep"),
    [
        (
            [("k", 0.5)],
            r"^thresholds=\[\('k', 0.5\)\]: input should be a valid dictionary",
            r"^thresholds=\[\('k', 0.5\)\]: use a mapping of feedback key",
        ),
        (
            "k=0.5",
            r"^thresholds='k=0.5': input should be a valid dictionary",
            r"^thresholds='k=0.5': use a mapping",
        ),
        (
            {1: 0.5},
            r"^thresholds key 1: input should be a valid string",
            r"^thresholds key 1: use the feedback key or evaluator name as text",
        ),
    ],
)
def test_thresholds_that_are_no_mapping_of_names_are_refused(
    value: Any, in_a_run: str, in_a_sweep: str
) -> None:
    with pytest.raises(InvalidOptionError, match=in_a_run):
        run_experiment("m:g", "missing.yaml", thresholds=value)
    with pytest.raises(InvalidOptionError, match=in_a_sweep):
        sweep_threads("m:g", None, thresholds=value)


# --------------------------------------------------------------------------- other options


# (argument, which values it takes): each predicate is the documented contract, written
# apart from the check it tests; None is taken where the option is optional
RUN_OPTIONS: list[tuple[str, Callable[[Any], bool]]] = [
    ("concurrency", lambda v: type(v) is int and v >= 1),
    ("repetitions", lambda v: type(v) is int and v >= 1),
    ("retries", lambda v: type(v) is int and v >= 0),
    ("timeout", lambda v: v is None or (type(v) in (int, float) and math.isfinite(v) and v > 0)),
    ("fail_under", lambda v: v is None or (type(v) in (int, float) and 0 <= v <= 1)),
    ("require_verdict", lambda v: type(v) is bool),
    ("langsmith", lambda v: type(v) is bool),
    ("run_id", lambda v: v is None or (type(v) is str and v != "")),
]


@pytest.mark.parametrize(("name", "accepts"), RUN_OPTIONS, ids=[n for n, _ in RUN_OPTIONS])
@given(value=garbage)
def test_run_options_take_each_value_the_contract_allows_and_name_any_other(
    name: str, accepts: Callable[[Any], bool], value: Any
) -> None:
    if accepts(value):  # past the options, the run needs a dataset this test does not give
        with pytest.raises(DatasetError, match=r"missing\.yaml: cannot read the dataset file"):
            run_experiment("m:g", "missing.yaml", **{name: value})
    else:
        with pytest.raises(InvalidOptionError, match=f"^{name}="):
            run_experiment("m:g", "missing.yaml", **{name: value})


SWEEP_OPTIONS: list[tuple[str, Callable[[Any], bool]]] = [
    ("sample", lambda v: v is None or (type(v) in (int, float) and 0 < v <= 1)),
    ("limit", lambda v: v is None or (type(v) is int and v >= 0)),
    ("worst", lambda v: type(v) is int and v >= 0),
    ("history", lambda v: type(v) is int and v >= 0),
    ("partition_size", lambda v: type(v) is int and v >= 1),
    ("page_size", lambda v: type(v) is int and v >= 1),
    ("incremental", lambda v: type(v) is bool),
]


@pytest.mark.parametrize(("name", "accepts"), SWEEP_OPTIONS, ids=[n for n, _ in SWEEP_OPTIONS])
@fuzz(100)  # no deadline: the first call builds the boundary's validator
@given(value=garbage)
def test_a_sweep_refuses_an_option_value_outside_its_contract_by_name(
    name: str, accepts: Callable[[Any], bool], value: Any
) -> None:
    if accepts(value):
        # past the option checks, the sweep needs a checkpointer this test does not give
        with pytest.raises(InvalidOptionError, match=r"^No checkpointer"):
            sweep_threads(_graph_without_saver(), None, **{name: value})
    else:
        with pytest.raises(InvalidOptionError, match=f"^{name}="):
            sweep_threads(_graph_without_saver(), None, **{name: value})


def _graph_without_saver() -> Any:
    from graphs.weather import build

    return build()


# --------------------------------------------------------------------------- runs and stores


def _run() -> Any:
    """An empty run (the aggregate tests' run builder)."""
    from tests.experiments.test_aggregate import run

    return run("a")


@given(value=garbage)
def test_compare_takes_a_tolerance_that_is_a_finite_difference_of_at_least_zero(value: Any) -> None:
    from lg_eval.experiments import compare_runs

    if type(value) in (int, float) and math.isfinite(value) and value >= 0:
        assert compare_runs(_run(), _run(), tolerance=value).tolerance == value
    else:
        with pytest.raises(InvalidOptionError, match=r"^tolerance="):
            compare_runs(_run(), _run(), tolerance=value)


@given(value=garbage)
def test_what_is_no_run_is_refused_by_compare_and_the_report_by_name(value: Any) -> None:
    from lg_eval.experiments import compare_runs
    from lg_eval.reports import build_report

    with pytest.raises(InvalidOptionError, match=r"^run_a=.*: use an ExperimentRun"):
        compare_runs(value, _run())
    with pytest.raises(InvalidOptionError, match=r"^run_b=.*: use an ExperimentRun"):
        compare_runs(_run(), value)
    with pytest.raises(InvalidOptionError, match=r"^run=.*instance of ExperimentRun"):
        build_report(value)
    if value is not None:
        with pytest.raises(InvalidOptionError, match=r"^comparison=.*instance of Comparison"):
            build_report(_run(), comparison=value)
    if not (isinstance(value, list) and not value):  # an empty list is no history
        with pytest.raises(
            InvalidOptionError, match=r"^history\b.*(Sequence|sequence|ExperimentRun)"
        ):
            build_report(_run(), history=value)


@pytest.mark.parametrize("url", [123, "", "  ", b"results.sqlite", ["a.sqlite"]])
def test_a_store_url_that_is_no_text_or_path_is_refused_before_any_file_is_made(
    url: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lg_eval.experiments import open_store

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidOptionError, match=r"^url=.*: use a file path"):
        open_store(url)
    assert list(tmp_path.iterdir()) == []


@given(value=garbage)
def test_every_renderer_and_aggregate_refuses_what_is_no_report_or_run(value: Any) -> None:
    from lg_eval.experiments import latency_percentiles, mean_scores, pass_at_k, pass_hat_k
    from lg_eval.reports import (
        render_comparison,
        render_html,
        render_json,
        render_junit,
        render_markdown,
        render_terminal,
    )

    for render in (render_html, render_json, render_junit, render_markdown, render_terminal):
        with pytest.raises(InvalidOptionError, match=r"^report\b.*instance of Report"):
            render(value)
    with pytest.raises(InvalidOptionError, match=r"^report=.*instance of Report"):
        render_comparison(value)
    for aggregate in (latency_percentiles, mean_scores, pass_at_k, pass_hat_k):
        with pytest.raises(InvalidOptionError, match=r"^run=.*: input should be .*ExperimentRun"):
            aggregate(value)


def test_a_report_without_a_comparison_is_refused_by_the_comparison_view() -> None:
    from lg_eval.reports import build_report, render_comparison

    with pytest.raises(InvalidOptionError, match=r"^render_comparison needs a report built with"):
        render_comparison(build_report(_run()))


@given(values=st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=5), q=garbage)
def test_a_percentile_takes_finite_values_and_a_rank_from_0_to_100(values: Any, q: Any) -> None:
    from lg_eval.experiments import percentile

    if type(q) in (int, float) and 0 <= q <= 100:
        got = percentile(values, q)
        assert got is None if not values else min(values) <= got <= max(values)
    else:
        with pytest.raises(InvalidOptionError, match=r"^q=.*: input should be"):
            percentile(values, q)
    with pytest.raises(InvalidOptionError, match=r"^values\[\d+\]=nan: input should be a finite"):
        percentile([*values, math.nan], 50)


def test_a_percentile_of_values_far_apart_stays_between_them() -> None:
    from lg_eval.experiments import percentile

    assert percentile([-1.7e308, 1.7e308], 50) == 0.0
    assert percentile([-1.7e308, 1.7e308], 75) == pytest.approx(0.85e308)


# --------------------------------------------------------------------------- argument kinds


def _wrong_kinds() -> list[tuple[str, Callable[[Any], object], str]]:
    """(what, call with the wrong value, the message's start) for the entry points that
    take a dataset, a thread, evaluators, a graph, records or samples."""
    from lg_eval.datasets import (
        case_from_thread,
        dataset_from_dict,
        dataset_hash,
        dump_dataset,
        load_dataset,
    )
    from lg_eval.nodes import (
        EvalNode,
        add_evaluations,
        batch_evaluate,
        evaluation_passed,
        weighted_score,
    )
    from lg_eval.stats import (
        adjust_per_case,
        mcnemar_test,
        mcnemar_tests,
        mean_interval,
        signed_rank_p_values,
        wilcoxon_test,
    )

    return [
        ("load_dataset", lambda v: load_dataset(v), r"path=.*: use a file path \(a non-blank"),
        ("dataset_from_dict", lambda v: dataset_from_dict(v), r"<data>: a dataset is a mapping"),
        ("dump_dataset", lambda v: dump_dataset(v, "d.yaml"), "dataset=.*: " + NO_DATASET),
        ("dataset_hash", lambda v: dataset_hash(v), "dataset=.*: " + NO_DATASET),
        (
            "case_from_thread",
            lambda v: case_from_thread(v, case_id="c"),
            r"thread=.*: input should be a valid dictionary or instance of ThreadTrajectory",
        ),
        ("EvalNode", lambda v: EvalNode(v), r"evaluators=.*: use an evaluator"),
        (
            "create_evaluation_graph",
            lambda v: create_evaluation_graph(v),
            r"evaluators=.*: use an evaluator",
        ),
        (
            "batch_evaluate",
            lambda v: batch_evaluate(v, []),
            r"graph=.*: input should be an instance of Pregel",
        ),
        ("evaluation_passed", lambda v: evaluation_passed(v), r"records=.*: input should be a"),
        ("weighted_score", lambda v: weighted_score(v), r"records=.*: input should be a valid"),
        ("add_evaluations", lambda v: add_evaluations([], [v]), r"An evaluations update must"),
        (
            "mcnemar_test",
            lambda v: mcnemar_test(v),
            "pairs=.*: " + NO_LIST,
        ),
        (
            "wilcoxon_test",
            lambda v: wilcoxon_test(v),
            "pairs=.*: " + NO_LIST,
        ),
        (
            "mcnemar_tests",
            lambda v: mcnemar_tests(v, case_ids=[]),
            "samples=.*: " + NO_LIST,
        ),
        (
            "mean_interval",
            lambda v: mean_interval(v),
            "values=.*: " + NO_LIST,
        ),
        (
            "signed_rank_p_values",
            lambda v: signed_rank_p_values(v),
            "samples=.*: " + NO_LIST,
        ),
        (
            "adjust_per_case",
            lambda v: adjust_per_case(v),
            "tests=.*: " + NO_LIST,
        ),
    ]


WRONG_KINDS = [None, 123, 2.5, object()]
NO_LIST = "input should be an instance of Sequence"
NO_DATASET = "input should be a valid dictionary or instance of Dataset"


@pytest.mark.parametrize("value", WRONG_KINDS, ids=["None", "int", "float", "object"])
def test_an_argument_of_the_wrong_kind_is_refused_by_name(
    value: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for what, call, message in _wrong_kinds():
        if what in ("EvalNode", "create_evaluation_graph", "add_evaluations") and value is None:
            continue  # None: no evaluator / nothing to add, refused or ignored on its own
        # InvalidOptionError for an argument, DatasetError for data that is no dataset
        with pytest.raises((InvalidOptionError, DatasetError), match="^" + message):
            call(value)
    assert list(tmp_path.iterdir()) == []  # nothing was written on the way


def test_the_edges_refuse_an_argument_of_the_wrong_kind_by_name() -> None:
    from lg_eval._importing import import_reference
    from lg_eval.errors import TrajectoryFormatError
    from lg_eval.extract import extract_langgraph_trajectory_from_snapshots, to_agentevals
    from lg_eval.langsmith import case_to_example, outputs_of
    from lg_eval.server import remote_target

    for value in (None, 123, "x", {"config": {}}):
        with pytest.raises(TrajectoryFormatError, match=r"^snapshots"):
            extract_langgraph_trajectory_from_snapshots(value)
    with pytest.raises(
        TrajectoryFormatError, match=r"^snapshots\[1\]=\{\}: expected a StateSnapshot"
    ):
        extract_langgraph_trajectory_from_snapshots([_snapshot(), {}])
    with pytest.raises(
        TrajectoryFormatError, match=r"^trajectory=\{\}: expected a ThreadTrajectory"
    ):
        to_agentevals({})  # type: ignore[arg-type]
    with pytest.raises(
        InvalidOptionError,
        match=r"^case=None: input should be a valid dictionary or instance of Case\.$",
    ):
        case_to_example(None)  # type: ignore[arg-type]
    with pytest.raises(
        InvalidOptionError,
        match=r"^thread='t': input should be a valid dictionary or instance of ThreadTrajectory",
    ):
        outputs_of("t", {})  # type: ignore[arg-type]
    with pytest.raises(
        InvalidOptionError,
        match=r"^remote='http://x': input should be an instance of RemoteGraph\.$",
    ):
        remote_target("http://x")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=r"^reference=None: use 'module:attr' as text"):
        import_reference(None)  # type: ignore[arg-type]


def _snapshot() -> Any:
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs.weather import build

    graph = build(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [("user", "weather in Paris?")]}, config)
    return next(iter(graph.get_state_history(config)))


@pytest.mark.parametrize(
    ("feedback", "message"),
    [
        ("key", r"^feedback='key': use a feedback dict or a list"),
        ([{"score": 1}], r"^feedback\[0\]=\{'score': 1\}: use a feedback dict with a text 'key'"),
        ({"key": "k", "score": math.nan}, r"^feedback\[0\] score=nan: use None, a bool"),
        ([{"key": "k", "score": "high"}], r"^feedback\[0\] score='high': use None, a bool"),
    ],
)
def test_log_feedback_sends_nothing_that_is_no_feedback(feedback: Any, message: str) -> None:
    from lg_eval.testing import log_feedback

    with pytest.raises(InvalidOptionError, match=message):
        log_feedback(feedback)


@pytest.mark.parametrize("pair", [5, "ab", None, b"xy"])
def test_a_pair_that_is_no_pair_is_refused_by_its_index(pair: Any) -> None:
    from lg_eval.stats import mcnemar_test, wilcoxon_test

    for test in (mcnemar_test, wilcoxon_test):
        with pytest.raises(
            InvalidOptionError, match=r"^pairs\[1\]=.*: input should be a valid tuple"
        ):
            test([(True, True) if test is mcnemar_test else (1.0, 0.5), pair])


def test_an_import_that_fails_with_an_unprintable_error_is_described_not_raised_again(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lg_eval._describe
    import lg_eval._feedback
    from lg_eval._importing import import_reference

    (tmp_path / "unprintable_mod.py").write_text(
        "class Odd(Exception):\n"
        "    def __str__(self):\n"
        "        raise RuntimeError('no text')\n"
        "raise Odd()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(InvalidOptionError, match=r"failed with Odd: Odd\(\)"):
        import_reference("unprintable_mod:graph")
    # one description of an error, re-exported where feedback is read
    assert lg_eval._feedback.describe_error is lg_eval._describe.describe_error


def test_routes_sweep_helpers_and_the_range_rule_refuse_the_wrong_kind_by_name() -> None:
    from lg_eval._feedback import check_score, checked_score
    from lg_eval.sweeps import checkpoint_bound, checkpoint_time, sweep_json, write_sweep_html

    with pytest.raises(InvalidOptionError, match=r"^passed=\['a'\]: use the name of a node"):
        route_on_score(passed=["a"], failed="b")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=r"^failed='': use the name of a node"):
        route_on_score(passed="a", failed="")
    for bad in (None, "x", "1ef0b2c4-5d6e-4f70-8000-000000000000"):  # the last is a uuid4
        with pytest.raises(InvalidOptionError, match=r"^checkpoint_id=.*: expected a uuid6"):
            checkpoint_time(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=r"^when='2026-01-01': use a datetime"):
        checkpoint_bound("2026-01-01")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=r"^result=None: use a SweepResult"):
        sweep_json(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=r"^result=None: use a SweepResult"):
        write_sweep_html(None, "sweep.html")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=r"^declared=\(0, 10\): use a ScoreRange"):
        check_score(5, (0, 10))  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=r"^result=0.5: use a feedback dict"):
        checked_score(0.5, None)  # type: ignore[arg-type]


def test_a_checkpoint_id_s_time_is_when_langgraph_made_it() -> None:
    from datetime import UTC, datetime, timedelta

    from langgraph.checkpoint.memory import InMemorySaver

    from graphs.weather import build
    from lg_eval.sweeps import checkpoint_bound, checkpoint_time

    before = datetime.now(UTC)
    graph = build(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [("user", "weather in sf?")]}, config)
    made = checkpoint_time(graph.get_state(config).config["configurable"]["checkpoint_id"])
    assert before - timedelta(seconds=1) <= made <= datetime.now(UTC) + timedelta(seconds=1)
    # the smallest id made at that moment reads back as that moment (to the id's 100 ns)
    assert abs(checkpoint_time(checkpoint_bound(made)) - made) < timedelta(microseconds=10)


def test_a_scorer_s_format_error_whose_text_raises_stays_a_format_error() -> None:
    from lg_eval._evaluator import make_evaluator
    from lg_eval.errors import TrajectoryFormatError

    class Odd(TrajectoryFormatError):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    def scorer(*, outputs: Any, **_: Any) -> bool:
        raise Odd("outputs['x'] is odd")

    with pytest.raises(TrajectoryFormatError):
        make_evaluator("odd", scorer)(outputs={"x": 1})
