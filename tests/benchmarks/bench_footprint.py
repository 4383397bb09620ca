"""Benchmark: lg_eval's footprint beside a plain loop and a peer, measured in one run.

Run with ``make bench`` or ``python -m tests.benchmarks --only footprint [--quick]``.
Every number is printed as a ratio (or a cost above the plain loop) of things measured
minutes apart at most on the same machine, so a busy machine slows both sides alike:

1. Start-up: ``import langgraph.graph`` against ``from lg_eval import run_experiment``,
   each in a fresh interpreter (``--rounds`` interleaved rounds, median wall time and
   median peak RSS), both reading bytecode compiled before the clock
   (:mod:`tests.benchmarks._interpreters`). Goal: at most 1.3x.
2. Per-case cost: the same ``--cases`` trivial cases (one input each to a two-node
   graph, one deterministic evaluator) through a plain ``invoke`` loop, pydantic_evals'
   ``Dataset.evaluate_sync`` (``EqualsExpected``) and lg_eval's ``run_experiment``
   (``graph_trajectory_strict_match``; results stored in a SQLite store), each on
   ``memory://`` and on a SQLite checkpointer file, at concurrency 1 and at the tool's
   default. Imports and a warm-up run are outside the clock; the variants alternate
   over the rounds and the median counts; the cost is (tool - plain loop) / cases in ms.
   Goal: lg_eval at most pydantic_evals (memory, concurrency 1).
3. Sweep: ``sweep_threads`` over the threads a run left in a SQLite checkpointer
   (list, extract, score with ``redundancy``, store) against a plain loop reading each
   thread's ``get_state_history``, at ``--sweep-threads`` threads (500 and 2,000), the
   two alternating over the rounds; the ratio is the median of the rounds' ratios.
   Goal: at most 1.5x. Twice: on the counter graph's threads (no messages: ``redundancy``
   has no calls to read and records its error on each thread), then on threads of the
   small tool-calling agent of ``tests.sweeps.helpers`` (a question, a tool call, its
   result and the answer: ``redundancy`` scores each thread).
4. Memory: the peak RSS (Linux ``VmHWM``, else ``ru_maxrss``) of a fresh process playing
   ``--memory-cases`` cases against one playing a tenth of them (SQLite checkpointer and
   store, default concurrency), two ways: ``run_experiment`` over a ``Dataset`` built in the
   process (with the run's own peak once the dataset is there), and ``lg-eval run`` of a
   JSONL file and of a YAML file with ``--graph graphs.counter:build`` (a factory: a graph
   built per case).
   Goal: at most 1.2x.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import chdir
from pathlib import Path
from typing import Any

from graphs.counter import build
from tests.benchmarks._interpreters import ROOT, compiled_env

LANGGRAPH = "import langgraph.graph"
LG_EVAL = "from lg_eval import run_experiment"
RSS = "\nimport resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"


HEADER = {"name": "footprint", "evaluators": ["graph_trajectory_strict_match"]}


def case_rows(cases: int) -> Iterator[dict[str, Any]]:
    """``cases`` trivial cases of ``graphs.counter``, as a dataset file writes them."""
    steps = {"trajectory": {"steps": [["__start__", "add", "double"]]}}
    for n in range(cases):
        yield {"id": f"c{n}", "turns": [{"input": {"x": n}}], "expected": steps}


def dataset(cases: int) -> Any:
    from lg_eval.datasets import Dataset

    return Dataset.model_validate({**HEADER, "cases": list(case_rows(cases))})


# -- 1. start-up ----------------------------------------------------------------------


def cold(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Seconds and peak MiB of a fresh interpreter running ``code`` in ``env``."""
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code + RSS], env=env, check=True, capture_output=True, text=True
    )
    return time.perf_counter() - started, int(out.stdout.split()[-1]) / 1024


def startup(rounds: int) -> None:
    found: dict[str, list[tuple[float, float]]] = {LANGGRAPH: [], LG_EVAL: []}
    with compiled_env(["-c", LANGGRAPH], ["-c", LG_EVAL]) as env:  # both read bytecode
        for round_ in range(rounds):
            for code in (LANGGRAPH, LG_EVAL)[:: 1 if round_ % 2 else -1]:
                found[code].append(cold(code, env))
    (lg_s, lg_mib), (ev_s, ev_mib) = (
        (statistics.median(s for s, _ in found[c]), statistics.median(m for _, m in found[c]))
        for c in (LANGGRAPH, LG_EVAL)
    )
    print(f"start-up over {rounds} interleaved rounds (median):")
    print(f"  {LANGGRAPH:<36} {lg_s:6.3f} s {lg_mib:6.0f} MiB")
    print(f"  {LG_EVAL:<36} {ev_s:6.3f} s {ev_mib:6.0f} MiB")
    print(f"  ratio {ev_s / lg_s:.2f}x time, {ev_mib / lg_mib:.2f}x peak memory (goal <= 1.3x)")


# -- 2. per-case cost ----------------------------------------------------------------------


def saver(backend: str, folder: Path) -> Any:
    if backend == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver()
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    return SqliteSaver(sqlite3.connect(folder / "plain.sqlite", check_same_thread=False))


def plain(cases: int, backend: str, folder: Path) -> None:
    graph = build(saver(backend, folder))
    for n in range(cases):
        graph.invoke({"x": n}, {"configurable": {"thread_id": f"t{n}"}})


def pydantic_evals(
    cases: int, backend: str, folder: Path, concurrency: int | None, *, read_back: bool = False
) -> None:
    """pydantic_evals' ``evaluate_sync`` over the cases; ``read_back``: its task also reads
    the thread it played back through LangGraph's ``get_state_history``, the least a
    pydantic_evals user does to score how the graph got to its answer."""
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import EqualsExpected

    graph = build(saver(backend, folder))
    data = Dataset[int, int, Any](
        name="footprint",
        cases=[Case(name=f"c{n}", inputs=n, expected_output=2 * (n + 1)) for n in range(cases)],
        evaluators=[EqualsExpected()],
    )

    def task(n: int) -> int:
        config: Any = {"configurable": {"thread_id": f"t{n}"}}
        answer = int(graph.invoke({"x": n}, config)["x"])
        if read_back:
            assert len(list(graph.get_state_history(config))) == 4
        return answer

    report = data.evaluate_sync(task, max_concurrency=concurrency, progress=False)
    assert len(report.cases) == cases and not report.failures


def lg_eval(cases: int, backend: str, folder: Path, concurrency: int | None) -> None:
    from lg_eval import run_experiment

    checkpointer = "memory://" if backend == "memory" else None  # None: the SQLite file
    with chdir(folder):
        run = run_experiment(
            build(),
            dataset(cases),
            checkpointer=checkpointer,
            **({} if concurrency is None else {"concurrency": concurrency}),
        )
    assert run.pass_rate == 1.0 and len(run.results) == cases, run.info


Variant = tuple[str, str, Callable[[int, str, Path], None]]

READ_BACK = "pydantic_evals + read back"
"""The label of pydantic_evals whose task reads the played thread back (``read_back``)."""


def variants() -> list[Variant]:
    found: list[Variant] = []
    for backend in ("memory", "sqlite"):
        found.append((backend, "plain loop", plain))
        for label, tool in (("pydantic_evals", pydantic_evals), ("lg_eval", lg_eval)):
            for concurrency in (1, None):

                def run(cases: int, b: str, folder: Path, tool: Any = tool, c: Any = concurrency):
                    tool(cases, b, folder, c)

                found.append((backend, f"{label} c={concurrency or 'default'}", run))

        def read_back(cases: int, b: str, folder: Path) -> None:
            pydantic_evals(cases, b, folder, 1, read_back=True)

        found.append((backend, f"{READ_BACK} c=1", read_back))
    return found


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "CPU": time.process_time}
"""The clocks each variant is timed by: wall time, and the CPU time of the process (every
thread's, so a tool's helper threads count)."""


def per_case(cases: int, rounds: int) -> None:
    """Each variant over ``cases`` cases, ``rounds`` alternating rounds after a warm-up; for
    each clock of :data:`CLOCKS`, its median and the milliseconds per case above the plain
    loop's median."""
    import pydantic_evals as _p  # noqa: F401

    import lg_eval as _  # noqa: F401  imports outside the clock

    times: dict[str, dict[tuple[str, str], list[float]]] = {clock: {} for clock in CLOCKS}
    every = variants()
    for round_ in range(rounds + 1):  # round 0: the warm-up, not counted
        order = every if round_ % 2 else every[::-1]
        for backend, label, run in order:
            with tempfile.TemporaryDirectory() as folder:
                started = {clock: read() for clock, read in CLOCKS.items()}
                run(cases if round_ else 20, backend, Path(folder))
                took = {clock: read() - started[clock] for clock, read in CLOCKS.items()}
            if round_:
                for clock, seconds in took.items():
                    times[clock].setdefault((backend, label), []).append(seconds)
    medians = {
        clock: {key: statistics.median(found) for key, found in by_key.items()}
        for clock, by_key in times.items()
    }
    above = {
        clock: {
            (backend, label): (median - of[(backend, "plain loop")]) / cases * 1000
            for (backend, label), median in of.items()
        }
        for clock, of in medians.items()
    }
    print(f"\nper case, {cases} cases, median of {rounds} alternating rounds:")
    for backend, label in medians["wall"]:
        key = (backend, label)
        cells = [
            f"{clock} {medians[clock][key]:7.3f} s"
            + ("" if label == "plain loop" else f" +{above[clock][key]:.2f} ms/case")
            for clock in CLOCKS
        ]
        print(f"  {backend:<7} {label:<30} " + ",  ".join(cells))
    for clock, of in above.items():
        ours, peer = of[("memory", "lg_eval c=1")], of[("memory", "pydantic_evals c=1")]
        read = of[("memory", f"{READ_BACK} c=1")]
        print(
            f"  {clock}: lg_eval / pydantic_evals above the loop (memory, c=1) "
            f"{ours / peer:.2f}x (goal <= 1.0x); / pydantic_evals reading the thread back "
            f"{ours / read:.2f}x"
        )


# -- 3. sweep --------------------------------------------------------------------------------


SWEPT = {
    "counter": "the counter graph (no messages: redundancy records its error on each)",
    "agent": "a tool-calling agent (4 messages: redundancy scores each)",
}
"""The threads swept: which graph wrote them (``--sweep-graphs``)."""


def sweep(sizes: Sequence[int], rounds: int, graphs: Sequence[str] = tuple(SWEPT)) -> None:
    """For each graph and size, ``rounds`` rounds of the history loop and the sweep over the
    same threads, the first of the two alternating; the ratio is the median of the rounds'
    own ratios (each round's two runs seconds apart, so a slow spell of a shared machine
    falls on both), beside the median wall and CPU times."""
    for kind in graphs:
        for threads in sizes:
            sweep_at(threads, rounds, kind)


def _swept_threads(folder: str, threads: int, kind: str) -> tuple[Any, Any]:
    """``(saver, graph bound to it)`` over ``threads`` threads the graph ``kind`` wrote to a
    SQLite file in ``folder``: a run of the counter dataset, or the agent's threads played
    one after another (one question each)."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from lg_eval import run_experiment

    if kind == "counter":
        with chdir(folder):
            run_experiment(build(), dataset(threads))
        path = Path(folder) / ".lg_eval" / "checkpoints.sqlite"
        saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
        return saver, build(saver)
    from tests.sweeps import helpers

    saver = SqliteSaver(sqlite3.connect(Path(folder) / "agent.sqlite", check_same_thread=False))
    agent = helpers.build(saver)
    for n in range(threads):
        helpers.play(agent, f"agent-{n:05d}")
    return saver, agent


def sweep_at(threads: int, rounds: int, kind: str = "counter") -> None:
    from lg_eval import sweep_threads

    with tempfile.TemporaryDirectory() as folder:
        saver, graph = _swept_threads(folder, threads, kind)
        ids = sorted({t.config["configurable"]["thread_id"] for t in saver.list(None)})

        def history() -> None:
            for thread_id in ids:
                list(graph.get_state_history({"configurable": {"thread_id": thread_id}}))

        def swept() -> None:
            with tempfile.TemporaryDirectory() as store:
                result = sweep_threads(
                    graph,
                    saver,
                    evaluators=["redundancy"],
                    store=Path(store) / "results.sqlite",
                )
                assert result.scored == len(ids), result.counts

        history(), swept()  # warm-up
        wall: dict[str, list[float]] = {"history": [], "sweep": []}
        cpu: dict[str, list[float]] = {"history": [], "sweep": []}
        for round_ in range(rounds):
            for name, work in (("history", history), ("sweep", swept))[:: 1 if round_ % 2 else -1]:
                started, used = time.perf_counter(), time.process_time()
                work()
                wall[name].append(time.perf_counter() - started)
                cpu[name].append(time.process_time() - used)
        loop, ours = (statistics.median(wall[k]) for k in ("history", "sweep"))
        ratio = statistics.median(
            s / h for s, h in zip(wall["sweep"], wall["history"], strict=True)
        )
        cpu_ratio = statistics.median(cpu["sweep"]) / statistics.median(cpu["history"])
        print(f"\nsweep of {len(ids)} threads of {SWEPT[kind]} (SQLite), {rounds} rounds:")
        print(f"  get_state_history loop {loop:.3f} s, sweep_threads {ours:.3f} s (medians)")
        print(
            f"  ratio {ratio:.2f}x (median of the rounds' ratios; goal <= 1.5x), "
            f"+{(ours - loop) / len(ids) * 1000:.2f} ms/thread; CPU time {cpu_ratio:.2f}x"
        )


# -- 4. memory -------------------------------------------------------------------------------


def _high_water() -> int | None:
    """This process's peak RSS in KiB since the last reset (Linux ``VmHWM``; None elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    except (OSError, StopIteration):
        return None


def _reset_high_water() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")  # resets VmHWM to the current RSS
    except OSError:
        return False
    return True


def _peak_kib() -> int:
    """This process's peak RSS in KiB: Linux's ``VmHWM`` (``ru_maxrss`` there keeps the peak
    of the process that forked it), else ``ru_maxrss``."""
    return _high_water() or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def memory_child(cases: int) -> None:
    """In a fresh process: ``run_experiment`` over ``cases`` cases; prints the process's peak
    RSS, then the run's own (its peak once the dataset is built; -1 where Linux's VmHWM
    cannot be reset). The dataset is the run's input, built in the process."""
    from lg_eval import run_experiment

    with tempfile.TemporaryDirectory() as folder, chdir(folder):
        data, graph = dataset(cases), build()
        whole = _peak_kib()
        reset = _reset_high_water()
        run = run_experiment(graph, data)
        assert len(run.results) == cases, run.info
        own = _high_water() if reset else None
    print(max(whole, _peak_kib()), own or -1)


def cli_child(file: str) -> None:
    """In a fresh process: ``lg-eval run`` of dataset ``file`` in the working directory;
    prints the process's peak RSS (KiB)."""
    from lg_eval.cli import main as lg_eval_cli

    sys.argv = ["lg-eval", "run", file, "--graph", "graphs.counter:build", "--quiet"]
    try:
        lg_eval_cli()
    except SystemExit as exit_:
        assert exit_.code == 0, exit_.code
    print(_peak_kib(), -1)


def write_dataset(cases: int, folder: Path, suffix: str) -> str:
    """The footprint dataset of ``cases`` cases as a JSONL or YAML file in ``folder``."""
    import yaml

    name = f"{cases}.{suffix}"
    with open(folder / name, "w", encoding="utf-8") as out:
        if suffix == "yaml":
            yaml.safe_dump({**HEADER, "cases": list(case_rows(cases))}, out, sort_keys=False)
        else:
            out.write(json.dumps({"dataset": HEADER}) + "\n")
            out.writelines(json.dumps(row) + "\n" for row in case_rows(cases))
    return name


def peak_mib(cases: int, suffix: str | None = None) -> tuple[float, float]:
    """Peak MiB of a fresh process playing ``cases`` cases (and the run's own, or -1): with
    ``run_experiment`` (``suffix`` None) or ``lg-eval run`` of a file with that suffix."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as folder:
        if suffix is None:
            child, cwd = ["--memory-child", str(cases)], ROOT
        else:
            child, cwd = ["--cli-child", write_dataset(cases, Path(folder), suffix)], Path(folder)
        out = subprocess.run(
            [sys.executable, "-m", "tests.benchmarks.bench_footprint", *child],
            env=env,
            cwd=cwd,
            check=True,
            capture_output=True,
            text=True,
        )
    whole, own = out.stdout.split()[-2:]
    return int(whole) / 1024, int(own) / 1024


def memory(cases: int) -> None:
    (small, small_run), (large, large_run) = peak_mib(cases // 10), peak_mib(cases)
    print("\npeak memory (SQLite, default concurrency, a fresh process each; Linux VmHWM):")
    print("run_experiment over a Dataset built in the process (the process, and the run's own")
    print("peak once its dataset is built):")
    print(f"  {cases // 10:>6} cases {small:7.0f} MiB process {small_run:7.0f} MiB run")
    print(f"  {cases:>6} cases {large:7.0f} MiB process {large_run:7.0f} MiB run")
    print(f"  ratio {large / small:.2f}x process, {large_run / small_run:.2f}x run (goal <= 1.2x)")
    for suffix in ("jsonl", "yaml"):
        (small, _), (large, _) = peak_mib(cases // 10, suffix), peak_mib(cases, suffix)
        print(f"lg-eval run N.{suffix} --graph graphs.counter:build --quiet:")
        print(f"  {cases // 10:>6} cases {small:7.0f} MiB")
        print(f"  {cases:>6} cases {large:7.0f} MiB")
        print(f"  ratio {large / small:.2f}x (goal <= 1.2x)")


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_footprint")
    parser.add_argument("--quick", action="store_true", help="fewer cases and rounds")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--memory-cases", type=int, default=20_000)
    parser.add_argument(
        "--sweep-threads",
        default="500,2000",
        help="thread counts of the sweep part, comma-separated",
    )
    parser.add_argument(
        "--sweep-graphs",
        default=",".join(SWEPT),
        help=f"whose threads the sweep part sweeps, comma-separated ({', '.join(SWEPT)})",
    )
    parser.add_argument("--part", action="append", choices=["startup", "cases", "sweep", "memory"])
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--cli-child", help=argparse.SUPPRESS)
    args, _ = parser.parse_known_args(list(argv))
    if args.memory_child:
        return memory_child(args.memory_child)
    if args.cli_child:
        return cli_child(args.cli_child)
    rounds, cases = (3, 100) if args.quick else (args.rounds, args.cases)
    memory_cases = 2_000 if args.quick else args.memory_cases
    parts = args.part or ["startup", "cases", "sweep", "memory"]
    if "startup" in parts:
        startup(rounds)
    if "cases" in parts:
        per_case(cases, rounds)
    if "sweep" in parts:
        sizes = [100] if args.quick else [int(n) for n in args.sweep_threads.split(",")]
        sweep(sizes, rounds, [g for g in args.sweep_graphs.split(",") if g])
    if "memory" in parts:
        memory(memory_cases)


if __name__ == "__main__":
    main(sys.argv[1:])
