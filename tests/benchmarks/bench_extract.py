"""Benchmark: extraction speed of lg_eval against agentevals on long ReAct threads.

Run with ``make bench`` (all benchmarks) or ``python -m tests.benchmarks --only extract``.
In one process and on the same stored threads it times lg_eval's ``extract_thread``
(default reader) and agentevals' ``extract_langgraph_trajectory_from_thread``, alternating
which goes first after a warm-up, on ``create_react_agent`` threads of 50, 200 and 800 tool
calls (one turn, or a tool that interrupts every ``EVERY`` calls and is resumed), on
InMemorySaver, SqliteSaver and PostgresSaver (when ``LG_EVAL_PG_DSN`` is set). It checks
that both give the same agentevals-shaped output, then times lg_eval alone at 2,000 calls,
measures lg_eval's peak extra memory (tracemalloc), and the throughput on 1,000 short
threads, one thread at a time and in batches of ``BATCH`` (``extract_threads``) (passes spread
over each backend's run, the fastest and the median reported: :class:`ShortThreads`).
Growth exponents come from the 200-, 800- and 2,000-call threads kept stored and
extracted in turn, round after round (:func:`interleaved`). Each target of the issue is
printed as PASS or FAIL.

Options: ``--agentevals-cap SECONDS`` skips agentevals at 800 calls on a backend after one
agentevals run there took longer (the real time is then reported as skipped, not guessed);
``--quick`` runs only 50/200 calls and 100 short threads; ``--only-throughput`` plays and
times only the short threads (``THROUGHPUT_PASSES`` passes per backend, ``PAUSE_S`` apart).
"""

from __future__ import annotations

import argparse
import functools
import gc
import itertools
import math
import os
import sqlite3
import statistics
import tempfile
import time
import tracemalloc
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command, interrupt
from rich.console import Console
from rich.table import Table

from graphs._scripted import ai, scripted_model, tool_call
from lg_eval import extract_thread
from lg_eval._effects import drive
from lg_eval.extract import extract_threads
from lg_eval.extract._agentevals_compat import to_agentevals
from lg_eval.extract.fast import storage_for

EVERY = 50
"""The interrupting variant's tool pauses on every EVERY-th call (then the driver resumes)."""
SIZES = (50, 200, 800)
LONG = 2_000
SHORT_CALLS = 5
SHORT_THREADS = 1_000
BATCH = 50
"""Threads per batch in the batched passes (a sweep partition's default size)."""
THROUGHPUT_PASSES = 9
PAUSE_S = 3.0
"""With ``--only-throughput``: passes per backend, and the pause between them (there is no
other case to spread them over)."""
RUNS = 5
"""Timed lg_eval runs per thread (median); agentevals runs fewer on long threads."""
SCALING_ROUNDS = 7
"""Rounds of :func:`interleaved` timing behind the growth exponents (best of each)."""
SCALED = (200, 800)
"""Lengths whose growth is measured (with ``LONG`` on the backends that play it)."""


def build_agent(calls: int, every: int, saver: BaseCheckpointSaver, threads: int = 1) -> Any:
    """A ``create_react_agent`` whose scripted model makes ``calls`` tool calls, one per step,
    then answers; ``threads`` times over, so one compiled graph can play that many threads
    one after another (as a deployed agent serves many threads)."""
    from langgraph.prebuilt import create_react_agent

    count = {"n": 0}

    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        count["n"] += 1
        if every and count["n"] % every == 0:
            return f"{query}: {interrupt({'confirm': query})}"
        return f"result for {query}"

    script = [
        ai(f"m{i}", "", tool_call("lookup", {"query": f"q{i}"}, f"c{i}")) for i in range(calls)
    ]
    model = scripted_model("react", *[*script, ai("final", "done")] * threads)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent's move to langchain.agents
        return create_react_agent(model, [lookup], checkpointer=saver)


def config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": 100_000}


def run_thread(graph: Any, thread_id: str) -> float:
    """Play the thread to its end (resuming every pause); the seconds the graph took."""
    start = time.perf_counter()
    graph.invoke({"messages": [{"role": "user", "content": "go", "id": "u0"}]}, config(thread_id))
    while graph.get_state(config(thread_id)).next:
        graph.invoke(Command(resume="yes"), config(thread_id))
    return time.perf_counter() - start


# --- backends -------------------------------------------------------------------------


@contextmanager
def memory_backend() -> Iterator[BaseCheckpointSaver]:
    yield InMemorySaver()


@contextmanager
def sqlite_backend() -> Iterator[BaseCheckpointSaver]:
    with tempfile.TemporaryDirectory() as folder:
        conn = sqlite3.connect(os.path.join(folder, "bench.sqlite"), check_same_thread=False)
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()


@contextmanager
def postgres_backend() -> Iterator[BaseCheckpointSaver]:
    """A PostgresSaver on a database of its own (``<test database>_bench``): the test
    fixtures truncate the shared tables, which would wipe threads mid-benchmark."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection, sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    from psycopg.rows import dict_row

    params = conninfo_to_dict(os.environ["LG_EVAL_PG_DSN"])
    name = f"{params.get('dbname', 'postgres')}_bench"
    with Connection.connect(make_conninfo(**params), autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(**{**params, "dbname": name})
    with Connection.connect(
        dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        yield saver


def backends() -> dict[str, Callable[[], Any]]:
    found: dict[str, Callable[[], Any]] = {"memory": memory_backend, "sqlite": sqlite_backend}
    if os.environ.get("LG_EVAL_PG_DSN"):
        found["postgres"] = postgres_backend
    return found


# --- measurements ---------------------------------------------------------------------


@dataclass
class Case:
    backend: str
    variant: str
    calls: int
    checkpoints: int = 0
    run_s: float = 0.0
    lg_s: float = math.nan
    ae_s: float = math.nan
    equal: bool | None = None
    peak_mb: float = math.nan
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.ae_s / self.lg_s if self.lg_s and not math.isnan(self.ae_s) else math.nan


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def peak_extra_mb(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return (tracemalloc.get_traced_memory()[1] - base) / 2**20
    finally:
        tracemalloc.stop()


def measure(
    case: Case, saver: BaseCheckpointSaver, with_agentevals: bool, keep: bool = False
) -> Stored | None:
    """Play the case's thread and time both extractors on it; the stored thread is deleted
    afterwards unless ``keep`` (then it is returned, for :func:`interleaved`)."""
    from agentevals.graph_trajectory.utils import extract_langgraph_trajectory_from_thread

    every = EVERY if case.variant == "interrupts" else 0
    thread_id = f"bench-{uuid.uuid4().hex[:8]}"
    graph = build_agent(case.calls, every, saver)
    case.run_s = run_thread(graph, thread_id)
    case.checkpoints = count_checkpoints(saver, thread_id)
    cfg = config(thread_id)
    lg = lambda: extract_thread(graph, cfg)  # noqa: E731
    ae = lambda: extract_langgraph_trajectory_from_thread(graph, cfg)  # noqa: E731
    trajectory = trajectory_of(lg)  # warm-up
    lg_times: list[float] = []
    ae_times: list[float] = []
    ae_runs = 0
    if with_agentevals:
        ae_runs = 1 if case.calls >= 800 else (2 if case.calls >= 200 else RUNS)
        if case.calls < 800:
            ae()  # warm-up (at 800 calls the 50-call warm-up already ran the same code)
    for i in range(max(RUNS, ae_runs)):
        order = [("lg", lg), ("ae", ae)] if i % 2 == 0 else [("ae", ae), ("lg", lg)]
        for name, fn in order:
            if name == "lg":
                seconds, trajectory = timed(fn)
                lg_times.append(seconds)
            elif len(ae_times) < ae_runs:
                seconds, reference = timed(fn)
                ae_times.append(seconds)
                case.equal = to_agentevals(trajectory) == reference
    case.lg_s = statistics.median(lg_times)
    if ae_times:
        case.ae_s = statistics.median(ae_times)
    case.peak_mb = peak_extra_mb(lg)
    if keep:
        return Stored(graph, thread_id)
    saver.delete_thread(thread_id)
    return None


@dataclass(frozen=True)
class Stored:
    """A played thread kept in its saver."""

    graph: Any
    thread_id: str


def forget(saver: BaseCheckpointSaver, threads: Iterable[Stored]) -> None:
    """Delete kept threads from their saver."""
    for stored in threads:
        saver.delete_thread(stored.thread_id)


@dataclass(frozen=True)
class Scaling:
    """lg_eval's best times on two thread lengths timed in turn (see :func:`interleaved`)."""

    backend: str
    variant: str
    small: int
    large: int
    small_s: float
    large_s: float

    @property
    def exponent(self) -> float:
        return math.log(self.large_s / self.small_s) / math.log(self.large / self.small)


def interleaved(threads: dict[int, Stored], rounds: int = SCALING_ROUNDS) -> dict[int, float]:
    """lg_eval's best time on each thread (keyed by tool calls), the threads extracted in
    turn, round after round (the order reversed every other round). On a shared 2-core
    machine a slow spell then falls on every length alike: timing each length minutes apart,
    after a different agentevals run, measured the machine's drift as much as growth."""
    best = dict.fromkeys(threads, math.inf)
    for round_ in range(rounds):
        for calls in list(threads)[:: 1 if round_ % 2 == 0 else -1]:
            graph, cfg = threads[calls].graph, config(threads[calls].thread_id)
            seconds, _ = timed(functools.partial(extract_thread, graph, cfg))
            best[calls] = min(best[calls], seconds)
    return best


def scalings(backend: str, variant: str, threads: dict[int, Stored]) -> list[Scaling]:
    """:func:`interleaved` on ``threads``, then each consecutive pair of lengths as a
    :class:`Scaling`."""
    best = interleaved(threads)
    lengths = sorted(threads)
    return [
        Scaling(backend, variant, a, b, best[a], best[b]) for a, b in itertools.pairwise(lengths)
    ]


def count_checkpoints(saver: BaseCheckpointSaver, thread_id: str) -> int:
    """The thread's checkpoints, counted from storage rows (``saver.list`` would decode every
    state: gigabytes at 2,000 tool calls)."""
    return len(drive(storage_for(saver).rows(saver, thread_id)).checkpoints)


def trajectory_of(fn: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


@dataclass
class ShortThreads:
    """Short threads (``SHORT_THREADS``, 100 with ``--quick``) played by one graph and kept
    stored on a saver, and the timed passes that extract them all, one after another
    (:meth:`time_pass`).

    The passes are spread over the backend's whole run (two first, then one after each
    case), and the best counts: a pass measures the machine as much as the code, and on
    this shared 2-core VM a slow spell (other tenants, the database server's own work)
    can last longer than five passes in a row. Each trajectory is dropped once extracted,
    as an evaluation run drops it once scored: keeping 1,000 of them alive would time the
    garbage collector's rescans of a growing heap, not extraction."""

    saver: BaseCheckpointSaver
    graph: Any
    ids: list[str]
    seconds: list[float] = field(default_factory=list)
    batched: list[float] = field(default_factory=list)
    """Passes of ``extract_threads`` in batches of ``BATCH``, each taken next to a
    one-at-a-time pass (which goes first alternates)."""

    @classmethod
    def play(cls, saver: BaseCheckpointSaver, threads: int) -> ShortThreads:
        ids = [f"short-{uuid.uuid4().hex[:8]}-{i}" for i in range(threads)]
        graph = build_agent(SHORT_CALLS, 0, saver, threads=threads)
        for thread_id in ids:
            run_thread(graph, thread_id)
        settle(saver)
        extract_thread(graph, config(ids[0]))  # warm-up
        list(extract_threads(graph, [config(t) for t in ids[:BATCH]], batch_size=BATCH))
        return cls(saver, graph, ids)

    def time_pass(self) -> None:
        """One pass of each way, one thread at a time and batched."""
        graph, ids = self.graph, self.ids

        def one_at_a_time() -> None:
            seconds, _ = timed(lambda: [extract_thread(graph, config(t)).thread_id for t in ids])
            self.seconds.append(seconds)

        def batched() -> None:
            configs = (config(t) for t in ids)
            seconds, _ = timed(
                lambda: [t.thread_id for t in extract_threads(graph, configs, batch_size=BATCH)]
            )
            self.batched.append(seconds)

        passes = [one_at_a_time, batched]
        for run in passes if len(self.seconds) % 2 == 0 else passes[::-1]:
            run()

    def delete(self) -> None:
        for thread_id in self.ids:
            self.saver.delete_thread(thread_id)

    def best(self, batched: bool = False) -> float:
        """Threads per second in the fastest pass."""
        return len(self.ids) / min(self.batched if batched else self.seconds)

    def median(self, batched: bool = False) -> float:
        """Threads per second in the median pass."""
        return len(self.ids) / statistics.median(self.batched if batched else self.seconds)


def settle(saver: BaseCheckpointSaver) -> None:
    """Let the database finish the work the previous cases left it (Postgres: vacuum and
    analyze the saver's tables, which autovacuum would otherwise do during the timing, and
    flush dirty pages), so the timed passes measure extraction."""
    conn = getattr(saver, "conn", None)
    if type(saver).__name__ == "PostgresSaver" and conn is not None:
        for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs"):
            conn.execute(f"VACUUM (ANALYZE) {table}")
        conn.execute("CHECKPOINT")


# --- report ---------------------------------------------------------------------------


def fmt(value: float, spec: str = ".3f") -> str:
    return "—" if math.isnan(value) else format(value, spec)


def report(
    console: Console,
    cases: list[Case],
    rates: dict[str, ShortThreads],
    growth: list[Scaling],
) -> None:
    table = Table(title="Extraction time: lg_eval (default reader) vs agentevals 0.0.9")
    for column in (
        "backend",
        "thread",
        "tool calls",
        "checkpoints",
        "graph run s",
        "agentevals s",
        "lg_eval s",
        "speed-up",
        "lg_eval / run",
        "peak MB",
        "same output",
    ):
        table.add_column(column, justify="right" if column not in ("backend", "thread") else "left")
    for c in cases:
        table.add_row(
            c.backend,
            c.variant,
            str(c.calls),
            str(c.checkpoints),
            fmt(c.run_s, ".2f"),
            fmt(c.ae_s),
            fmt(c.lg_s, ".4f"),
            fmt(c.ratio, ".0f") + ("×" if c.ratio == c.ratio else ""),
            fmt(100 * c.lg_s / c.run_s, ".2f") + "%",
            fmt(c.peak_mb, ".1f"),
            {True: "yes", False: "NO", None: "—"}[c.equal],
        )
    console.print(table)
    throughput_report(console, rates)
    growth_table = Table(
        title=f"Growth: lg_eval's best of {SCALING_ROUNDS} rounds, the lengths timed in turn"
    )
    for column in ("backend", "thread", "tool calls", "seconds", "exponent"):
        growth_table.add_column(column)
    for g in growth:
        growth_table.add_row(
            g.backend,
            g.variant,
            f"{g.small} → {g.large}",
            f"{g.small_s:.4f} → {g.large_s:.4f}",
            f"{g.exponent:.2f}",
        )
    console.print(growth_table)
    targets(console, cases, rates, growth)


def throughput_report(
    console: Console, rates: dict[str, ShortThreads], spread: str = "over the backend's run"
) -> None:
    rate_table = Table(
        title=f"Throughput: {SHORT_CALLS}-call threads, one at a time and in batches of {BATCH} "
        f"(passes spread {spread})"
    )
    columns = ("backend", "extraction", "threads", "passes", "fastest pass s", "threads/s")
    for column in (*columns, "median /s"):
        rate_table.add_column(column)
    for backend, short in rates.items():
        for batched in (False, True):
            seconds = short.batched if batched else short.seconds
            rate_table.add_row(
                backend,
                f"batches of {BATCH}" if batched else "one at a time",
                str(len(short.ids)),
                str(len(seconds)),
                f"{min(seconds):.3f}",
                f"{short.best(batched):,.0f}",
                f"{short.median(batched):,.0f}",
            )
    console.print(rate_table)


def throughput_checks(rates: dict[str, ShortThreads]) -> list[tuple[str, bool | None]]:
    return [
        (
            f"{b}, {'batched' if batched else 'one at a time'}: ≥ 1,000 short threads/s "
            f"({short.best(batched):,.0f}/s fastest, {short.median(batched):,.0f}/s median of "
            f"{len(short.seconds)} passes)",
            short.median(batched) >= 1000 if batched else short.best() >= 1000,
        )
        for b, short in rates.items()
        for batched in (False, True)
    ]


def print_checks(console: Console, checks: list[tuple[str, bool | None]]) -> None:
    for text, ok in checks:
        mark = {True: "[green]PASS[/]", False: "[red]FAIL[/]", None: "[yellow]SKIP[/]"}[ok]
        console.print(f"{mark} {text}")


def only_throughput(console: Console, threads: int) -> None:
    """Play and time only the short threads, ``THROUGHPUT_PASSES`` passes ``PAUSE_S`` apart."""
    rates: dict[str, ShortThreads] = {}
    for backend, make in backends().items():
        if backend == "memory":
            continue
        with make() as saver:
            console.log(f"{backend}: throughput, short threads")
            short = rates[backend] = ShortThreads.play(saver, threads)
            for _ in range(THROUGHPUT_PASSES):
                short.time_pass()
                time.sleep(PAUSE_S)
            short.delete()
    throughput_report(console, rates, f"{PAUSE_S:g} s apart")
    print_checks(console, throughput_checks(rates))


def targets(
    console: Console,
    cases: list[Case],
    rates: dict[str, ShortThreads],
    growth: list[Scaling],
) -> None:
    def find(backend: str, variant: str, calls: int) -> Case | None:
        return next(
            (c for c in cases if (c.backend, c.variant, c.calls) == (backend, variant, calls)), None
        )

    checks: list[tuple[str, bool | None]] = []
    for backend in dict.fromkeys(c.backend for c in cases):
        for variant in ("one turn", "interrupts"):
            at800 = find(backend, variant, 800)
            label = f"{backend}, {variant}, 800 calls"
            if at800 is not None:
                checks.append(
                    (
                        f"{label}: lg_eval ≤ 1/100 of agentevals ({fmt(at800.ratio, '.0f')}×)",
                        None if math.isnan(at800.ratio) else at800.ratio >= 100,
                    )
                )
                share = 100 * at800.lg_s / at800.run_s
                checks.append(
                    (f"{label}: lg_eval ≤ 2% of the graph's run ({share:.2f}%)", share <= 2)
                )
                checks.append(
                    (f"{label}: extra memory ≤ 50 MB ({at800.peak_mb:.1f} MB)", at800.peak_mb <= 50)
                )
    checks += [
        (
            f"{g.backend}, {g.variant}: time exponent {g.small}→{g.large} ≤ 1.2 ({g.exponent:.2f})",
            g.exponent <= 1.2,
        )
        for g in growth
    ]
    checks += throughput_checks(rates)
    checks += [
        (f"{c.backend}, {c.variant}, {c.calls} calls: same output as agentevals", c.equal)
        for c in cases
        if c.equal is not None
    ]
    print_checks(console, checks)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_extract", description=__doc__.splitlines()[0])
    parser.add_argument("--agentevals-cap", type=float, default=float("inf"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only-throughput", action="store_true")
    parser.add_argument(
        "--long",
        default="sqlite,postgres",
        help="backends that also get the 2,000-call thread (comma-separated; its graph run takes "
        "minutes and stores ~3.5 GB, which InMemorySaver would hold in RAM)",
    )
    args, _ = parser.parse_known_args(argv)
    args.long = set() if args.quick else set(args.long.split(","))
    started = time.perf_counter()
    console = Console(width=max(160, Console().width))
    if args.only_throughput:
        only_throughput(console, 100 if args.quick else SHORT_THREADS)
        console.print(f"benchmark took {time.perf_counter() - started:.0f} s")
        return
    sizes = SIZES[:2] if args.quick else SIZES
    cases: list[Case] = []
    rates: dict[str, ShortThreads] = {}
    growth: list[Scaling] = []
    for backend, make in backends().items():
        with make() as saver:
            short = None
            if backend != "memory":
                console.log(f"{backend}: throughput, short threads")
                short = rates[backend] = ShortThreads.play(
                    saver, 100 if args.quick else SHORT_THREADS
                )
                short.time_pass()
                short.time_pass()
            slow = False
            kept: dict[str, dict[int, Stored]] = {}
            runs = [(v, calls) for v in ("one turn", "interrupts") for calls in sizes]
            for variant, calls in runs:
                case = Case(backend, variant, calls)
                console.log(f"{backend}: {variant}, {calls} tool calls")
                stored = measure(case, saver, not (calls >= 800 and slow), calls in SCALED)
                if stored is not None:
                    kept.setdefault(variant, {})[calls] = stored
                slow = slow or case.ae_s > args.agentevals_cap
                cases.append(case)
                if short is not None:
                    short.time_pass()
            for variant, threads in kept.items():
                console.log(f"{backend}: growth, {variant}")
                growth += scalings(backend, variant, threads)
            one_turn = kept.get("one turn", {})
            longest_scaled = SCALED[-1]  # timed again against the LONG thread
            kept_long = (
                one_turn.pop(longest_scaled)
                if backend in args.long and longest_scaled in one_turn
                else None
            )
            for threads in kept.values():
                forget(saver, threads.values())
            if short is not None:
                short.delete()
            if kept_long is not None:
                # the 2,000-call thread last: on SQLite it pushes the file past the 2 GiB that
                # SQLite memory-maps, and threads stored after it would be read past that too
                # (so its growth is timed against the 800-call thread read the same way)
                case = Case(backend, "one turn", LONG)
                console.log(f"{backend}: one turn, {LONG} tool calls")
                longest = measure(case, saver, False, keep=True)
                cases.append(case)
                assert longest is not None
                threads = {longest_scaled: kept_long, LONG: longest}
                console.log(f"{backend}: growth, one turn, {longest_scaled} and {LONG}")
                growth += scalings(backend, "one turn", threads)
                forget(saver, threads.values())
    report(console, cases, rates, growth)
    console.print(f"benchmark took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
