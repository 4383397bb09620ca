"""Run every benchmark: ``python -m tests.benchmarks [--only NAME ...] [options]``.

Each ``tests/benchmarks/bench_*.py`` module with a ``main()`` is imported and run in
turn (alphabetical order). ``--only extract`` runs just ``bench_extract``; other
options are left in ``sys.argv`` for the benchmarks that read them.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path


def discover() -> list[str]:
    """Names of the ``bench_*`` modules next to this file."""
    folder = Path(__file__).parent
    return sorted(
        m.name for m in pkgutil.iter_modules([str(folder)]) if m.name.startswith("bench_")
    )


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks", add_help=False)
    parser.add_argument("--only", action="append", default=[], help="bench_<NAME> to run")
    args, rest = parser.parse_known_args()
    sys.argv = [sys.argv[0], *rest]
    names = [n for n in discover() if not args.only or n.removeprefix("bench_") in args.only]
    if not names:
        print(f"no benchmark matches {args.only}; found {', '.join(discover())}", file=sys.stderr)
        return 2
    for name in names:
        print(f"\n=== {name} ===", flush=True)
        module = importlib.import_module(f"{__package__}.{name}")
        run = module.main
        run(rest) if inspect.signature(run).parameters else run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
