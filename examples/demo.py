"""The main job on the embedded default: example graphs on a SQLite checkpointer.

Runs every example graph in ``graphs/`` through its human-in-the-loop script
(scripted chat models, no API key), stores the threads in a SQLite file,
extracts each thread with lg_eval and prints it turn by turn, then scores each
thread against its golden reference (``examples/golden/example_threads.json``)
with deterministic graph evaluators.

    make demo            # or: .venv/bin/python examples/demo.py [path/to/checkpoints.sqlite]
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphs.scenarios import SCENARIOS  # noqa: E402
from lg_eval import (  # noqa: E402
    create_graph_trajectory_similarity_evaluator,
    extract_thread,
    graph_trajectory_strict_match,
)
from lg_eval.display import print_trajectory  # noqa: E402

DEFAULT_DB = ROOT / ".lg_eval" / "demo.sqlite"
GOLDEN = ROOT / "examples" / "golden" / "example_threads.json"


def score_table(rows: list[tuple[str, dict, dict]]) -> Table:
    """One row per thread: strict match and similarity against its golden reference."""
    table = Table(title="scores against examples/golden/example_threads.json")
    for column in ("thread", "strict match", "similarity", "comment"):
        table.add_column(column, overflow="fold")
    for name, strict, similarity in rows:
        table.add_row(
            name, str(strict["score"]), f"{similarity['score']:.2f}", strict["comment"] or ""
        )
    return table


def main(db_path: Path = DEFAULT_DB) -> None:
    console = Console()
    golden = json.loads(GOLDEN.read_text())
    similarity = create_graph_trajectory_similarity_evaluator()
    rows = []
    db_path.parent.mkdir(parents=True, exist_ok=True)
    db_path.unlink(missing_ok=True)
    with sqlite3.connect(db_path, check_same_thread=False) as connection:
        saver = SqliteSaver(connection)
        for name, scenario in SCENARIOS.items():
            graph = scenario.build(checkpointer=saver)
            thread_id = f"demo-{name}"
            scenario.run(graph, thread_id)
            console.rule(f"[bold]{name}[/]: {scenario.description}")
            trajectory = extract_thread(graph, {"configurable": {"thread_id": thread_id}})
            print_trajectory(trajectory, console)
            reference = golden[name]
            rows.append(
                (
                    name,
                    graph_trajectory_strict_match(outputs=trajectory, reference_outputs=reference),
                    similarity(outputs=trajectory, reference_outputs=reference),
                )
            )
    console.rule("[bold]evaluation[/]")
    console.print(score_table(rows))
    console.print(f"\nCheckpoints kept in {db_path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DB)
