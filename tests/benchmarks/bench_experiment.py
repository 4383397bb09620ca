"""Benchmark: the experiment runner against a plain ``invoke`` loop playing the same turns.

Run with ``make bench`` or ``python -m tests.benchmarks --only experiment [--quick]``.
1,000 cases (100 with ``--quick``) of the human-in-the-loop email agent
(``graphs.hitl_agent``: ``create_agent`` + ``HumanInTheLoopMiddleware``) with a
deterministic chat model: each case sends a request, the agent proposes
``send_email``, the case approves it, the agent answers. Three deterministic
evaluators score each case (graph trajectory, tool calls, exact answer).

In one process, on one SQLite checkpointer file (opened the same way for both),
it times the plain loop (``invoke(input)``, ``invoke(Command(resume=...))`` per
thread: play only) and ``run_experiment`` (play, extract, score, store in the
results SQLite file), alternating which goes first over ``--rounds`` rounds; the
median of each counts (wall and CPU). Goal: runner / plain <= 1.10 (wall). The
runner scores in its scoring process (``scoring="auto"`` picks it here);
``--ab-inline`` also times it scoring inline. CPU counts this process and the
children it waited for (the scoring process).

Both sides compile the graph once: the plain loop builds it on the checkpointer, and the
runner is given it compiled (``build()``) and binds it once to the run's checkpointer.
``--target factory`` hands the runner the factory instead, which it calls once per case
by design (each case gets its own graph); that build is lg_eval-independent user code and
is shown as a phase.

``--ab-concurrency N`` also times the runner at concurrency N in every round, so one run
compares, say, the default 4 with 1 (sequential, like the plain loop).

After the timed rounds, the runner's own case core (play, extract, score, store) runs
sequentially over ``PHASE_CASES`` cases with each step's CPU time added to what it does
(the graph's invokes, the player's state checks, the extraction's reads, the evaluators,
the pure-Python rest, the store), next to the plain loop's CPU per case measured just
before it: what lg_eval adds per case, all of it, not a sample of pieces.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.types import Command

from graphs import hitl_agent
from lg_eval._effects import Core, Effect
from lg_eval.datasets import Dataset
from lg_eval.evaluator import Evaluator
from lg_eval.experiments import ExperimentRun, open_store, run_experiment
from lg_eval.experiments._case import CaseContext, plan_for, run_case
from lg_eval.experiments._targets import CaseTargets
from lg_eval.experiments.scoring import EvaluatorResolver
from lg_eval.play import open_checkpointer

GOAL = 1.10
ROUNDS = 5
PHASE_CASES = 200
ANSWER = "Done: I emailed Bob."
APPROVE = {"decisions": [{"type": "approve"}]}
STEPS = [
    ["__start__", "model", "HumanInTheLoopMiddleware.after_model", "__interrupt__"],
    ["tools", "model", "HumanInTheLoopMiddleware.after_model"],
]  # fmt: skip


class EmailModel(BaseChatModel):
    """Proposes ``send_email`` for a new request and answers once the tool has run."""

    @property
    def _llm_type(self) -> str:
        return "bench-email"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> EmailModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage(ANSWER)
        else:
            call = {"name": "send_email", "args": hitl_agent.REPLY_TO_BOB, "id": "call_email"}
            reply = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def build(checkpointer: Any = None) -> Any:
    return hitl_agent.build(checkpointer, model=EmailModel())


def user(n: int) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"Answer Bob, please ({n})."}]}


def turns(n: int) -> list[dict[str, Any]]:
    return [{"input": user(n)}, {"resume": APPROVE}]


def dataset(cases: int) -> Dataset:
    expected = {
        "trajectory": {"steps": STEPS},
        "tool_calls": [{"name": "send_email", "args": {"to": "bob@example.com"}}],
        "output": ANSWER,
    }
    return Dataset.model_validate(
        {
            "name": "bench-hitl",
            "cases": [
                {"id": f"c{n}", "turns": turns(n), "expected": expected} for n in range(cases)
            ],
        }
    )  # fmt: skip


Timing = tuple[float, float, float]
"""Wall seconds; CPU seconds of this process (all threads) and of the child processes it
waited for (the runner's scoring process)."""


def _cpu() -> tuple[float, float]:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), children.ru_utime + children.ru_stime


def _timing(start: float, cpu: tuple[float, float]) -> Timing:
    own, children = _cpu()
    return time.perf_counter() - start, own - cpu[0], children - cpu[1]


def plain_loop(url: str, cases: int, prefix: str, threads: int = 1) -> Timing:
    """Play every case's turns with ``invoke`` on the checkpointer (no lg_eval involved), one
    thread after another; with ``threads > 1`` that many Python threads share the cases
    (what the runner's ``concurrency`` does, without lg_eval)."""
    with open_checkpointer(url) as saver:
        graph = build(saver)

        def play(numbers: range) -> None:
            for n in numbers:
                config: Any = {"configurable": {"thread_id": f"{prefix}-{n}"}}
                graph.invoke(user(n), config)
                graph.invoke(Command(resume=APPROVE), config)

        start, cpu = time.perf_counter(), _cpu()
        if threads == 1:
            play(range(cases))
        else:
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(play, (range(k, cases, threads) for k in range(threads))))
        return _timing(start, cpu)


def runner(
    url: str, store: Path, data: Dataset, run_id: str, concurrency: int, target: Any,
    scoring: Any = "auto",
) -> tuple[Timing, ExperimentRun]:  # fmt: skip
    start, cpu = time.perf_counter(), _cpu()
    run = run_experiment(
        target, data, checkpointer=url, store=store, run_id=run_id, concurrency=concurrency,
        judge_cache=False, scoring=scoring,
    )  # fmt: skip
    elapsed = _timing(start, cpu)
    statuses = {r.status for r in run.results}
    assert statuses == {"passed"}, f"unexpected statuses {statuses}: {run.results[0]}"
    assert len(run.results) == len(data.cases)
    return elapsed, run


def _per_case(seconds: float, cases: int) -> float:
    return seconds / cases * 1000


GRAPH = "the graph's own invokes (what the plain loop does)"
STATE = "player: state checks (fresh thread, paused turns)"
READS = "extraction: checkpointer reads"
EVALUATORS = "3 evaluators"
PURE = "extraction assembly, scoring, results (pure Python)"
STORE = "store: serialize + write (one commit per case)"


def _effect_kind(effect: Effect[Any]) -> str:
    run = effect.run
    if isinstance(run, functools.partial) and isinstance(run.func, Evaluator):
        return EVALUATORS
    name = getattr(run, "__qualname__", "")
    if name.startswith(("_invoke.", "watched_turn.")):
        return GRAPH
    if name.startswith("_get_state."):
        return STATE
    return READS


def _timed_drive(core: Core[Any], spent: Counter[str]) -> Any:
    """:func:`lg_eval._effects.drive`, adding the CPU time of each effect to its kind in
    ``spent`` and the time between effects (the core's own Python) to ``PURE``."""
    clock = time.process_time
    mark = clock()
    try:
        effect = next(core)
        while True:
            now = clock()
            spent[PURE] += now - mark
            kind, mark = _effect_kind(effect), now
            try:
                result = effect.run()
            except Exception as exc:
                now = clock()
                spent[kind] += now - mark
                mark = now
                effect = core.throw(exc)
            else:
                now = clock()
                spent[kind] += now - mark
                mark = now
                effect = core.send(result)
    except StopIteration as stop:
        spent[PURE] += clock() - mark
        return stop.value


def phases(url: str, folder: Path, data: Dataset, target: Any) -> tuple[float, dict[str, float]]:
    """The runner's own case core (play, extract, score, store), run sequentially on this
    thread over ``PHASE_CASES`` cases, its CPU split by what each step does; and the plain
    loop's CPU per case measured just before it. Milliseconds per case."""
    cases = data.cases[:PHASE_CASES]
    n = len(cases)
    plain_ms = _per_case(plain_loop(url, n, "phase-plain")[1], n)
    spent: Counter[str] = Counter()
    with open_checkpointer(url) as saver, open_store(folder / "phase-store.sqlite") as store:
        resolver = EvaluatorResolver(data)
        context = CaseContext(
            run_id="phase", targets=CaseTargets(target, data, saver), saver=saver,
            thresholds={}, retries=1, redactor=None, resume_threads=False,
        )  # fmt: skip
        for ordinal, case in enumerate(cases):
            plan = plan_for(resolver, ordinal, case, 0)
            result = _timed_drive(run_case(context, plan), spent)
            mark = time.process_time()
            store.write([(ordinal, result)])
            spent[STORE] += time.process_time() - mark
    order = (GRAPH, STATE, READS, PURE, EVALUATORS, STORE)
    return plain_ms, {kind: _per_case(spent[kind], n) for kind in order}


def _threaded_job(url: str, cases: int, threads: int) -> Callable[[int], Timing]:
    return lambda r: plain_loop(url, cases, f"plain{r}-t{threads}", threads)


def _line(name: str, ran: list[Timing], cases: int) -> None:
    wall, own, children = (statistics.median(t[k] for t in ran) for k in range(3))
    split = f" ({own:.2f} here + {children:.2f} scoring process)" if children else ""
    print(f"  {name:38s} {wall:7.2f} s wall ({_per_case(wall, cases):6.2f} ms/case)  "
          f"{own + children:6.2f} s CPU{split}  (medians)")  # fmt: skip


def _ratios(against: str, ran: list[Timing], baseline: list[Timing]) -> None:
    """Wall and CPU ratios: the median of each round against its own baseline, and the best
    (fastest) round of each side, which is the least disturbed by other jobs. CPU is given
    in all (with the scoring process) and of this process alone."""
    pairs = list(zip(baseline, ran, strict=True))
    walls = [r[0] / p[0] for p, r in pairs]
    cpus = [(r[1] + r[2]) / (p[1] + p[2]) for p, r in pairs]
    here = [r[1] / (p[1] + p[2]) for p, r in pairs]
    ratio = statistics.median(walls)
    best = min(t[0] for t in ran) / min(t[0] for t in baseline)
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    print(f"    {against}: wall {ratio:.3f} (median; goal <= {GOAL:.2f}: {verdict}), "
          f"best rounds {best:.3f}; CPU {statistics.median(cpus):.3f}, "
          f"of this process {statistics.median(here):.3f}")  # fmt: skip
    print("      per round, wall: " + ", ".join(f"{r:.3f}" for r in walls)
          + "; CPU: " + ", ".join(f"{r:.3f}" for r in cpus))  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_experiment")
    parser.add_argument("--quick", action="store_true", help="100 cases instead of 1,000")
    parser.add_argument("--concurrency", type=int, default=4, help="the runner's (default 4)")
    parser.add_argument(
        "--ab-concurrency", type=int, default=None, metavar="N",
        help="also time the runner at concurrency N in every round (an A/B in one run)",
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"default {ROUNDS}")
    parser.add_argument(
        "--target", choices=("compiled", "factory"), default="compiled",
        help="what the runner is given: the compiled graph (default) or the factory",
    )  # fmt: skip
    parser.add_argument(
        "--ab-inline", action="store_true",
        help="also time each concurrency with scoring='inline' (no scoring process)",
    )  # fmt: skip
    args, _ = parser.parse_known_args(argv)
    cases = 100 if args.quick else 1_000
    data = dataset(cases)
    target: Any = build() if args.target == "compiled" else build
    levels = [args.concurrency]
    if args.ab_concurrency is not None and args.ab_concurrency != args.concurrency:
        levels.append(args.ab_concurrency)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        url = f"sqlite:///{folder / 'checkpoints.sqlite'}"
        store = folder / "results.sqlite"
        os.chdir(folder)  # the default .lg_eval files, if any, stay in the temporary folder
        plain_loop(url, 10, "warm")  # imports, first compile, SQLite tables
        runner(url, store, dataset(10), "warm", args.concurrency, target)

        def run_job(level: int, scoring: str = "auto") -> Callable[[int], Timing]:
            name = f"run{{r}}-c{level}-{scoring}"
            return lambda r: runner(url, store, data, name.format(r=r), level, target, scoring)[0]

        threaded = sorted({level for level in levels if level > 1})
        jobs: list[tuple[str, Callable[[int], Timing]]] = [
            ("plain", lambda r: plain_loop(url, cases, f"plain{r}")),
            *((f"plain-t{n}", _threaded_job(url, cases, n)) for n in threaded),
            *((f"c{level}", run_job(level)) for level in levels),
            *((f"c{level}-inline", run_job(level, "inline")) for level in levels if args.ab_inline),
        ]
        timings: dict[str, list[Timing]] = {job_name: [] for job_name, _ in jobs}
        for round_ in range(args.rounds):  # alternate which goes first
            for job_name, job in jobs if round_ % 2 == 0 else reversed(jobs):
                timings[job_name].append(job(round_))
        plain_cpu_ms, per_phase = phases(url, folder, data, build())
        start = time.perf_counter()
        with open_checkpointer(url) as saver:
            for _ in range(PHASE_CASES):
                build(saver)
        factory_ms = _per_case(time.perf_counter() - start, PHASE_CASES)
    print(f"{cases} HITL cases (2 turns each), 3 evaluators, SQLite checkpointer; runner "
          f"target: {args.target}; {args.rounds} interleaved rounds")  # fmt: skip
    for n in (1, *threaded):
        label = "sequential" if n == 1 else f"{n} threads"
        _line(f"plain invoke loop, {label}", timings["plain" if n == 1 else f"plain-t{n}"], cases)
    for job_name in timings:
        if not job_name.startswith("c"):
            continue
        level = int(job_name[1:].partition("-")[0])
        label = f"concurrency={level}" + (", scoring inline" if "inline" in job_name else "")
        _line(f"run_experiment, {label}", timings[job_name], cases)
        _ratios("against the sequential plain loop", timings[job_name], timings["plain"])
        if level > 1:
            against = f"against the plain loop in {level} threads"
            _ratios(against, timings[job_name], timings[f"plain-t{level}"])
    print(f"  The runner's case core run sequentially over {min(cases, PHASE_CASES)} cases, CPU "
          f"ms/case; % of the plain loop's {plain_cpu_ms:.2f} ms CPU/case:")  # fmt: skip
    for phase, ms in per_phase.items():
        print(f"    {phase:52s} {ms:7.3f} ms  {ms / plain_cpu_ms:6.1%}")
    extra = sum(ms for phase, ms in per_phase.items() if phase != GRAPH)
    print(f"    {'everything lg_eval adds':52s} {extra:7.3f} ms  {extra / plain_cpu_ms:6.1%}")
    print(f"    {'graph build per case (factory targets only, wall)':52s} {factory_ms:7.3f} ms")


if __name__ == "__main__":
    main()
