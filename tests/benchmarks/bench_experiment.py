"""Benchmark: what the experiment runner adds per case, on cases that wait on a model.

Run with ``make bench`` or ``python -m tests.benchmarks --only experiment [--quick]``.
The cases are the human-in-the-loop email agent's (``graphs.hitl_agent``: ``create_agent`` +
``HumanInTheLoopMiddleware``): each sends a request, the agent proposes ``send_email``, the
case approves it, the agent answers. The chat model is scripted, and each of its two calls
per case sleeps ``--model-wait`` seconds (default 0.1) the way a call to a provider waits on
the network: the thread gives up the GIL and other cases go on. Three deterministic
evaluators score each case (graph trajectory, tool calls, exact answer).

In one process, on one SQLite checkpointer file, over ``--rounds`` rounds alternating which
goes first, it times a plain loop (``invoke(input)``, ``invoke(Command(resume=...))`` per
thread, in ``concurrency`` Python threads: play only, no lg_eval) and ``run_experiment`` at
the same concurrency (play, read back, score, store in the results SQLite file). The runner's
**overhead per case** is what it adds to the run's wall time beyond the plain loop, per
case: ``(runner - plain) / cases``, in ms; the median over the rounds counts. Goal: at most
``GOAL_MS``. Beside a model call of seconds that overhead is what a run costs
on top of the model; it does not grow with the model's wait.

Then the runner's own case core (play, read back, score, store) runs sequentially over
``PHASE_CASES`` cases with a model that does not wait, each step's CPU time added to what it
does (the graph's invokes, the player's state checks, the extraction's reads, the
evaluators, the pure-Python rest, the store): where the overhead's CPU goes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
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
from lg_eval.experiments import open_store, run_experiment
from lg_eval.experiments._case import CaseContext, CaseTargets, plan_for, run_case
from lg_eval.experiments._score import EvaluatorResolver
from lg_eval.play import open_checkpointer

GOAL_MS = 10.0
"""The most the runner may add to a run's wall time per case, in ms."""
ROUNDS = 3
CASES = 400
MODEL_WAIT = 0.1
PHASE_CASES = 200
ANSWER = "Done: I emailed Bob."
APPROVE = {"decisions": [{"type": "approve"}]}
STEPS = [
    ["__start__", "model", "HumanInTheLoopMiddleware.after_model", "__interrupt__"],
    ["tools", "model", "HumanInTheLoopMiddleware.after_model"],
]  # fmt: skip


class EmailModel(BaseChatModel):
    """Proposes ``send_email`` for a new request and answers once the tool has run."""

    wait: float = 0.0
    """Seconds each call sleeps, as a call to a provider waits on the network."""

    @property
    def _llm_type(self) -> str:
        return "bench-email"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> EmailModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        time.sleep(self.wait)
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage(ANSWER)
        else:
            call = {"name": "send_email", "args": hitl_agent.REPLY_TO_BOB, "id": "call_email"}
            reply = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def build(checkpointer: Any = None, wait: float = 0.0) -> Any:
    return hitl_agent.build(checkpointer, model=EmailModel(wait=wait))


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


def plain_loop(url: str, cases: int, prefix: str, threads: int, wait: float) -> float:
    """Wall seconds to play every case's turns with ``invoke`` on the checkpointer, in
    ``threads`` Python threads (what the runner's ``concurrency`` does, without lg_eval)."""
    with open_checkpointer(url) as saver:
        graph = build(saver, wait)

        def play(numbers: range) -> None:
            for n in numbers:
                config: Any = {"configurable": {"thread_id": f"{prefix}-{n}"}}
                graph.invoke(user(n), config)
                graph.invoke(Command(resume=APPROVE), config)

        start = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(play, (range(k, cases, threads) for k in range(threads))))
        return time.perf_counter() - start


def runner(
    url: str, store: Path, data: Dataset, run_id: str, concurrency: int, wait: float
) -> float:
    """Wall seconds of ``run_experiment`` over ``data`` (every case must pass)."""
    start = time.perf_counter()
    run = run_experiment(
        build(wait=wait), data, checkpointer=url, store=store, run_id=run_id,
        concurrency=concurrency, judge_cache=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    statuses = {r.status for r in run.results}
    assert statuses == {"passed"}, f"unexpected statuses {statuses}: {run.results[0]}"
    assert len(run.results) == len(data.cases)
    return elapsed


def _per_case(seconds: float, cases: int) -> float:
    return seconds / cases * 1000


GRAPH = "the graph's own invokes (what the plain loop does)"
STATE = "player: state checks (fresh thread, paused turns)"
READS = "extraction: checkpointer reads"
EVALUATORS = "3 evaluators"
PURE = "extraction assembly, scoring, results (pure Python)"
STORE = "store: serialize + write (one commit per case)"


def _effect_kind(effect: Effect[Any]) -> str:
    name = getattr(effect.run, "__qualname__", "")
    if name.startswith("call_evaluators."):
        return EVALUATORS
    if name.startswith(("_invoke.", "watched_turn.")):
        return GRAPH
    if name.startswith("read_state."):
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
    cpu = time.process_time()
    plain_loop(url, n, "phase-plain", 1, 0.0)
    plain_ms = _per_case(time.process_time() - cpu, n)
    spent: Counter[str] = Counter()
    with open_checkpointer(url) as saver, open_store(folder / "phase-store.sqlite") as store:
        resolver = EvaluatorResolver(data)
        context = CaseContext(
            run_id="phase", targets=CaseTargets(target, data, saver), thresholds={},
            retries=1, redactor=None, resume_threads=False,
        )  # fmt: skip
        for ordinal, case in enumerate(cases):
            plan = plan_for(resolver, ordinal, case, 0)
            result = _timed_drive(run_case(context, plan), spent)
            mark = time.process_time()
            store.write([(ordinal, result)])
            spent[STORE] += time.process_time() - mark
    order = (GRAPH, STATE, READS, PURE, EVALUATORS, STORE)
    return plain_ms, {kind: _per_case(spent[kind], n) for kind in order}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_experiment")
    parser.add_argument("--quick", action="store_true", help=f"40 cases, not {CASES}; 1 round")
    parser.add_argument("--concurrency", type=int, default=4, help="the runner's (default 4)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"default {ROUNDS}")
    parser.add_argument(
        "--model-wait", type=float, default=MODEL_WAIT, metavar="S",
        help=f"seconds each model call waits (default {MODEL_WAIT})",
    )  # fmt: skip
    args, _ = parser.parse_known_args(argv)
    cases, rounds = (40, 1) if args.quick else (CASES, args.rounds)
    level, wait = args.concurrency, args.model_wait
    data = dataset(cases)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        url = f"sqlite:///{folder / 'checkpoints.sqlite'}"
        store = folder / "results.sqlite"
        os.chdir(folder)  # the default .lg_eval files, if any, stay in the temporary folder
        plain_loop(url, 10, "warm", 1, 0.0)  # imports, first compile, SQLite tables
        runner(url, store, dataset(10), "warm", level, 0.0)
        plain: list[float] = []
        ran: list[float] = []
        for round_ in range(rounds):  # alternate which goes first

            def play_plain(r: int = round_) -> None:
                plain.append(plain_loop(url, cases, f"plain{r}", level, wait))

            def play_runner(r: int = round_) -> None:
                ran.append(runner(url, store, data, f"run{r}", level, wait))

            jobs = [play_plain, play_runner]
            for job in jobs if round_ % 2 == 0 else reversed(jobs):
                job()
        plain_cpu_ms, per_phase = phases(url, folder, data, build())
    overheads = [(r - p) / cases * 1000 for p, r in zip(plain, ran, strict=True)]
    overhead = statistics.median(overheads)
    verdict = "PASS" if overhead <= GOAL_MS else "FAIL"
    print(f"{cases} HITL cases (2 turns, 2 model calls of {wait * 1000:.0f} ms each), "
          f"3 evaluators, SQLite checkpointer, concurrency {level}; {rounds} rounds")  # fmt: skip
    for label, times in (("plain invoke loop", plain), ("run_experiment", ran)):
        wall = statistics.median(times)
        print(f"  {label:20s} {wall:7.2f} s wall, {_per_case(wall * level, cases):7.2f} ms "
              f"per case per worker (median)")  # fmt: skip
    print(f"  overhead per case: {overhead:.2f} ms (median; goal <= {GOAL_MS:.0f} ms: "
          f"{verdict}); per round: " + ", ".join(f"{o:.2f}" for o in overheads))  # fmt: skip
    print(f"  The runner's case core run sequentially over {min(cases, PHASE_CASES)} cases, no "
          f"model wait, CPU ms/case; % of the plain loop's {plain_cpu_ms:.2f} ms:")  # fmt: skip
    for phase, ms in per_phase.items():
        print(f"    {phase:52s} {ms:7.3f} ms  {ms / plain_cpu_ms:6.1%}")
    extra = sum(ms for phase, ms in per_phase.items() if phase != GRAPH)
    print(f"    {'everything lg_eval adds':52s} {extra:7.3f} ms  {extra / plain_cpu_ms:6.1%}")


if __name__ == "__main__":
    main()
