"""Every case of the example golden datasets (``examples/golden/*.yaml``) with its dataset."""

from __future__ import annotations

from pathlib import Path

from lg_eval.datasets import load_dataset

GOLDEN = Path(__file__).parent.parent.parent / "examples" / "golden"
CASES = [(d, c) for p in sorted(GOLDEN.glob("*.yaml")) for d in [load_dataset(p)] for c in d.cases]
IDS = [case.id for _, case in CASES]
