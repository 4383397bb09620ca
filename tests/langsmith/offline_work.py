"""One offline path, run in a subprocess by test_offline.py: prints ``NET`` per socket attempt.

Usage: ``python tests/langsmith/offline_work.py MODE``. An audit hook reports every
DNS lookup and connection the process attempts (to any host), so nothing that
bypasses the recording server goes unseen; ``DONE <time>`` marks the end of the work.
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NET_EVENTS = {"socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.sendto"}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in NET_EVENTS:
        print("NET", event, repr(args)[:120], file=sys.stderr, flush=True)


sys.addaudithook(_audit)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)  # every log line is checked

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langsmith import evaluate  # noqa: E402

from graphs.scenarios import SCENARIOS  # noqa: E402
from lg_eval.cli import main as cli_main  # noqa: E402
from lg_eval.evaluators import graph_trajectory_strict_match  # noqa: E402
from lg_eval.experiments import run_experiment  # noqa: E402
from lg_eval.langsmith import graph_target, offline, offline_client  # noqa: E402
from lg_eval.nodes import batch_evaluate, create_evaluation_graph  # noqa: E402
from tests.langsmith.helpers import examples_of, golden  # noqa: E402

GOOD = {"steps": [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]}


def evaluation_graph() -> Any:
    saver = InMemorySaver()
    scenario = SCENARIOS["weather"]
    for n in range(3):
        scenario.run(scenario.build(checkpointer=saver), f"w{n}")
    weather = scenario.build(checkpointer=saver)
    graph = create_evaluation_graph(
        [graph_trajectory_strict_match], checkpointer=InMemorySaver(), graphs={"weather": weather}
    )
    cases = [
        {"target": {"graph": "weather", "thread_id": f"w{n}"}, "reference": GOOD} for n in range(3)
    ]
    return graph, cases


GOLDEN_WEATHER = Path(__file__).resolve().parents[2] / "examples" / "golden" / "weather.yaml"


def _store() -> str:
    folder = Path(tempfile.mkdtemp())
    return f"sqlite:///{folder / 'results.sqlite'}"


def run(mode: str) -> str:
    if mode == "batch_evaluate_online":  # opted in: traced as LANGSMITH_TRACING says
        graph, cases = evaluation_graph()
        items = batch_evaluate(graph, cases, max_concurrency=2, langsmith=True)
        return str([i.result.passed for i in items if i.result])
    if mode == "batch_evaluate_default":  # no offline() around it: offline by default
        with offline():  # only the threads it evaluates are played under offline()
            graph, cases = evaluation_graph()
        items = batch_evaluate(graph, cases, max_concurrency=2)
        return str([i.result.passed for i in items if i.result])
    if mode == "evaluation_graph_default":  # invoked directly, no offline() around it
        with offline():  # only the threads it evaluates are played under offline()
            graph, cases = evaluation_graph()
        config = {"configurable": {"thread_id": "evaluation"}}
        out = [graph.invoke(case, config) for case in cases[:1]]
        return str([o["result"]["passed"] for o in out])
    if mode == "run_experiment":  # offline by default too
        run = run_experiment(None, str(GOLDEN_WEATHER), checkpointer="memory://", store=_store())
        return str([r.status == "passed" for r in run.results])
    if mode == "cli_run":  # lg-eval run, as a user types it
        sys.argv = ["lg-eval", "run", str(GOLDEN_WEATHER), "--checkpointer", "memory://",
                    "--store", _store(), "--quiet"]  # fmt: skip
        try:
            cli_main()
        except SystemExit as done:
            return f"exit {done.code} True"
        return "True"
    if mode == "batch_evaluate":
        with offline():  # the played threads and their evaluation: nothing traced
            graph, cases = evaluation_graph()
            items = batch_evaluate(graph, cases, max_concurrency=2)
        return str([i.result.passed for i in items if i.result])
    if mode == "evaluation_graph":
        with offline():
            graph, cases = evaluation_graph()
            config = {"configurable": {"thread_id": "evaluation"}}
            out = [graph.invoke(case, config) for case in cases[:1]]
        return str([o["result"]["passed"] for o in out])
    if mode == "evaluate":
        dataset = golden("weather")
        with offline():
            results = evaluate(
                graph_target(dataset.graph, checkpointer="memory://", allow_code=True),
                data=examples_of(dataset),
                evaluators=[graph_trajectory_strict_match],
                upload_results=False,
                client=offline_client(),
                max_concurrency=2,
            )
            return str([r.score for row in results for r in row["evaluation_results"]["results"]])
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    print("RESULT", run(sys.argv[1]), flush=True)
    print("DONE", time.time(), flush=True)
