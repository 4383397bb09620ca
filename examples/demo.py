"""The main job on the embedded default: example graphs on a SQLite checkpointer.

Runs every example graph in ``graphs/`` through its human-in-the-loop script
(scripted chat models, no API key), stores the threads in a SQLite file,
extracts each thread with lg_eval and prints it turn by turn.

    make demo            # or: .venv/bin/python examples/demo.py [path/to/checkpoints.sqlite]
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver
from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphs.scenarios import SCENARIOS  # noqa: E402
from lg_eval import extract_thread  # noqa: E402
from lg_eval.display import print_trajectory  # noqa: E402

DEFAULT_DB = ROOT / ".lg_eval" / "demo.sqlite"


def main(db_path: Path = DEFAULT_DB) -> None:
    console = Console()
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
    console.print(f"\nCheckpoints kept in {db_path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DB)
