"""Benchmark: calibrating a judge on 10,000 labels.

Run with ``python -m tests.benchmarks --only calibration [--quick] [--rounds N]``.

* ``verdict_agreement`` of 10,000 (judge verdict, person's label) pairs given as dicts: as
  10,000 cases of one turn, and as 2,000 cases of 5 turns (the bootstrap resamples cases);
  every statistic with its 1,999-resample interval.
* ``krippendorff_alpha`` of 10,000 ratings (a judge and two people on 3,334 cases), nominal
  and interval.
* ``lg_eval.labels.calibrate`` end to end from a SQLite results store holding a run of
  10,000 judged cases and a person's label of each: the labels read, paired with the judge's
  verdicts in SQL, the agreement computed; once with labels of the run's cases, once with
  labels of threads (paired with the newest run that scored each, as harvested labels are),
  and with a 5,000-label held-out split.

Seconds per call, the median of the rounds. On a shared machine the numbers are noisy: run
it when it is quiet.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lg_eval.calibration import krippendorff_alpha, verdict_agreement
from lg_eval.experiments import CaseResult, ResultStore, RunInfo, ScoreRow, open_store
from lg_eval.labels import Label, calibrate, save_labels
from tests.benchmarks.bench_stats import median_seconds


def labelled_pairs(labels: int, turns: int, seed: int = 0) -> list[dict[str, Any]]:
    """A judge that agrees with the person on about 85% of the labels."""
    draw = random.Random(seed)
    pairs = []
    for index in range(labels):
        human = draw.random() < 0.6
        judge = human if draw.random() < 0.85 else not human
        pairs.append(
            {"case_id": f"case-{index // turns}", "turn": index % turns, "judge": judge,
             "human": human}
        )  # fmt: skip
    return pairs


def ratings(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """Three raters' 1-5 ratings, close to each case's own level."""
    draw = random.Random(seed)
    out: list[dict[str, Any]] = []
    case = 0
    while len(out) < count:
        level = draw.randint(1, 5)
        for rater in ("judge", "alice", "bob")[: count - len(out)]:
            value = min(5, max(1, level + draw.choice((-1, 0, 0, 0, 1))))
            out.append({"case_id": f"case-{case}", "rater": rater, "value": value})
        case += 1
    return out


def labelled_store(folder: Path, labels: int, seed: int = 0) -> ResultStore:
    """A store with a sweep-like run of ``labels`` judged cases (``case_id`` the thread's),
    and two labels of each: one of the run's case (key ``quality``), one of its thread
    (key ``quality_thread``); the judge agrees with the person on about 85%."""
    draw = random.Random(seed)
    store = open_store(folder / "results.sqlite")
    now = datetime.now(UTC)
    info = RunInfo(run_id="sweep-1", dataset="sweep:bench", dataset_hash="h", target="t",
                   checkpointer="c", started_at=now)  # fmt: skip
    store.begin_run(info)
    results, marks = [], []
    for index in range(labels):
        human = draw.random() < 0.6
        judge = human if draw.random() < 0.85 else not human
        thread = f"thread-{index:05d}"
        rows = [ScoreRow(evaluator=key, key=key, score=judge, passed=judge, comment="said so")
                for key in ("quality", "quality_thread")]  # fmt: skip
        results.append((index, CaseResult(run_id="sweep-1", case_id=thread, thread_id=thread,
                                          status="passed", scores=rows)))  # fmt: skip
        marks += [
            Label(key="quality", run_id="sweep-1", case_id=thread, verdict=human,
                  labeler="alice", labeled_at=now, source="viewer"),
            Label(key="quality_thread", thread_id=thread, turn=1, item="c-book",
                  verdict=human, labeler="reviewer", labeled_at=now, source="interrupt"),
        ]  # fmt: skip
    for start in range(0, labels, 1_000):
        store.write(results[start : start + 1_000])
    save_labels(store, marks)
    return store


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_calibration")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    args, _ = parser.parse_known_args(list(argv))
    n = 1_000 if args.quick else 10_000
    work: list[tuple[str, Callable[[], object]]] = []
    for turns in (1, 5):
        pairs = labelled_pairs(n, turns)
        work.append(
            (
                f"verdict_agreement, {n // turns} cases × {turns}",
                lambda p=pairs: verdict_agreement(p),
            )
        )
    rated = ratings(n)
    for level in ("nominal", "interval"):
        work.append(
            (
                f"krippendorff_alpha ({level}), 3 raters",
                lambda lv=level: krippendorff_alpha(rated, level=lv),  # type: ignore[arg-type]
            )
        )
    with tempfile.TemporaryDirectory() as folder:
        store = labelled_store(Path(folder), n)
        work += [
            (f"calibrate from the store, {n} labels of a run's cases",
             lambda: calibrate(store, "quality")),
            (f"calibrate from the store, {n} labels of threads (roll-up of actions)",
             lambda: calibrate(store, "quality_thread")),
            (f"calibrate from the store, held-out half of {n} labels",
             lambda: calibrate(store, "quality", split="held_out", fraction=0.5)),
        ]  # fmt: skip
        print(f"{n} labels, median of {args.rounds} rounds")
        print("| work | s |")
        print("|---|---:|")
        for label, call in work:
            print(f"| {label} | {median_seconds(args.rounds, call):.3f} |")
        store.close()


if __name__ == "__main__":
    main()
