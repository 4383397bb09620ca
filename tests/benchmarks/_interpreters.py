"""Fresh interpreters for start-up measurements, reading compiled bytecode on both sides.

An installed package is read from the bytecode pip compiled when it installed it; a source
checkout on ``PYTHONPATH`` is compiled on first import and, where ``PYTHONDONTWRITEBYTECODE``
is set (CI images and sandboxes often set it), compiled again on every start. Timing
``import langgraph.graph`` (installed) against ``from lg_eval import run_experiment``
(this checkout) in such an environment counts lg_eval's compilation and none of
LangGraph's. :func:`compiled_env` gives both sides the same footing: bytecode cached in a
temporary ``PYTHONPYCACHEPREFIX`` (Python then reads and writes every module's bytecode
there, installed ones included), written by a warm-up outside the clock, removed after.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def compiled_env(*warm_up: Sequence[str]) -> Iterator[dict[str, str]]:
    """An environment for fresh interpreters (this checkout on ``PYTHONPATH``) whose
    bytecode lives in a temporary cache; each of ``warm_up`` (the arguments after
    ``python``) runs once first, so the modules it imports are compiled before the clock."""
    with tempfile.TemporaryDirectory(prefix="lg-eval-bytecode-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=cache)
        for args in warm_up:
            subprocess.run([sys.executable, *args], env=env, check=True, capture_output=True)
        yield env
