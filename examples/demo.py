"""The main job, on the embedded SQLite default: the golden datasets as one experiment.

Plays every case of ``examples/golden/*.yaml`` on the example graphs of
``graphs/`` (scripted chat models, no API key): each case on a fresh thread
of an embedded SQLite checkpointer, its human turns answered as its script
says (resumes, answers by node, computed answers, breakpoints continued,
state edits). Then it scores every thread with the datasets' deterministic
evaluators, keeps the results in the SQLite results store, and writes the HTML
report. ``weather-regression-demo`` is wrong on purpose, so the report shows
real failures. With ``OPENAI_API_KEY`` set, an LLM judge of each route runs
too.

    make demo            # or: .venv/bin/python examples/demo.py [output directory]
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lg_eval.datasets import Dataset, EvaluatorRef, load_dataset  # noqa: E402
from lg_eval.experiments import open_store, run_experiment  # noqa: E402
from lg_eval.langsmith import offline  # noqa: E402
from lg_eval.reports import build_report, render_html, render_terminal  # noqa: E402

GOLDEN = ROOT / "examples" / "golden"
JUDGE = EvaluatorRef(name="graph_trajectory_accuracy")


def golden_dataset(judge: bool) -> Dataset:
    """Every golden file's cases in one dataset, each with its file's graph and evaluators."""
    cases = []
    for path in sorted(GOLDEN.glob("*.yaml")):
        dataset = load_dataset(path)
        for case in dataset.cases:
            evaluators = list(case.evaluators or dataset.evaluators)
            if judge:
                evaluators.append(JUDGE)
            update = {"graph": case.graph or dataset.graph, "evaluators": evaluators}
            cases.append(case.model_copy(update=update))
    return Dataset(name="examples-golden", cases=cases, allows_code=True)


def main(out: Path) -> None:
    console = Console()
    judge = bool(os.environ.get("OPENAI_API_KEY"))
    if not judge:
        console.print("No OPENAI_API_KEY: the LLM judge is skipped; deterministic evaluators only.")
    elif importlib.util.find_spec("langchain_openai") is None:
        console.print(
            "OPENAI_API_KEY is set, but the judge's provider is not installed "
            '(pip install -e ".[openai]"): the LLM judge is skipped.'
        )
        judge = False
    out.mkdir(parents=True, exist_ok=True)
    checkpoints, results = out / "demo-checkpoints.sqlite", out / "demo-results.sqlite"
    for stale in (checkpoints, results):
        stale.unlink(missing_ok=True)
    dataset = golden_dataset(judge)
    started = time.perf_counter()
    with offline():  # the demo sends nothing anywhere
        run = run_experiment(
            None,
            dataset,
            checkpointer=f"sqlite:///{checkpoints}",
            store=f"sqlite:///{results}",
            run_id="demo",
        )
    elapsed = time.perf_counter() - started
    with open_store(f"sqlite:///{results}") as store:
        report = build_report(store.load_run(run.info.run_id))
    render_terminal(report, console)
    html = out / "demo-report.html"
    html.write_text(render_html(report), encoding="utf-8")
    console.print(
        f"{len(run.results)} cases from {len(list(GOLDEN.glob('*.yaml')))} golden files in "
        f"{elapsed:.1f} s. Report: {html}"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".lg_eval")
