"""Start-up: importing lg_eval, and a one-case ``lg-eval run``, load only what they use.

Each check runs in a fresh interpreter and reads ``sys.modules``: which modules are loaded,
not how long they took (the timings are ``make bench``'s, bench_footprint).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Loaded by the statistics, the Ray executor, the HTML report and the server clients: none
# of them is needed to import lg_eval or to run an experiment.
HEAVY = ("scipy", "numpy", "ray", "jinja2", "httpx")


def loaded_after(setup: str, code: str, cwd: Path = ROOT) -> list[str]:
    """The top-level packages that ``code`` loads on top of ``setup``, in a fresh process."""
    script = (
        "import json, sys\n"
        f"{setup}\n"
        "before = set(sys.modules)\n"
        f"{code}\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in set(sys.modules) - before})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, check=True
    )
    return list(json.loads(out.stdout.splitlines()[-1]))


def test_import_lg_eval_loads_neither_langgraph_nor_any_heavy_package() -> None:
    added = loaded_after("", "import lg_eval")
    assert "lg_eval" in added
    assert not set(added) & {*HEAVY, "langgraph", "langchain_core", "pydantic"}


@pytest.mark.parametrize(
    "code",
    [
        "from lg_eval import run_experiment",
        "import lg_eval.experiments",
        "from lg_eval import extract_thread, Feedback, get_evaluator",
        "from lg_eval.evaluators import create_trajectory_match_evaluator",
    ],
)
def test_the_runner_loads_no_heavy_package_beyond_langgraphs_own(code: str) -> None:
    # httpx comes with langgraph itself (langgraph.runtime imports langgraph_sdk): what
    # lg_eval adds on top of `import langgraph.graph` is what counts
    added = loaded_after("import langgraph.graph", code)
    assert "lg_eval" in added
    assert not set(added) & set(HEAVY), added


def test_a_one_case_run_of_the_command_line_imports_no_statistics_library(
    tmp_path: Path,
) -> None:
    (tmp_path / "one.yaml").write_text(
        "name: one\ngraph: graphs.counter:build\nevaluators: [graph_trajectory_strict_match]\n"
        "cases:\n  - id: c1\n    turns: [{input: {x: 1}}]\n"
        "    expected: {trajectory: {steps: [[__start__, add, double]]}}\n"
    )
    run = (
        "from lg_eval.cli import main\n"
        "sys.argv = ['lg-eval', 'run', 'one.yaml', '--store', 'sqlite:///r.sqlite',"
        " '--checkpointer', 'sqlite:///c.sqlite']\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    assert exit.code == 0, exit.code\n"
    )
    added = loaded_after("import langgraph.graph", run, cwd=tmp_path)
    assert "lg_eval" in added
    # the terminal summary shows Wilson intervals: computed without scipy
    assert not set(added) & {"scipy", "numpy", "ray"}, added
