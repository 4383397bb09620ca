"""The LangGraph versions whose internals the fast readers were tested against.

The fast path relies on things no public API promises: the task-id hash
(``langgraph.pregel._algo``), the checkpoint format version, and each saver's
tables and dicts. Outside these ranges the ``auto`` reader uses the generic
one (a wrong name is worse than a slow extraction); ``reader="fast"`` refuses.
Widen a range only after ``tests/test_extract_readers.py`` passes on it.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata

TESTED: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    # package: (lowest tested version, first untested version)
    "langgraph": ((1, 2, 0), (1, 3, 0)),
    "langgraph-checkpoint": ((4, 3, 0), (4, 4, 0)),
}
STORAGE_TESTED: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    "langgraph-checkpoint-sqlite": ((3, 1, 0), (3, 2, 0)),
    "langgraph-checkpoint-postgres": ((3, 2, 0), (3, 3, 0)),
}
CHECKPOINT_FORMAT = 4
"""``checkpoint["v"]`` the readers understand (``langgraph.pregel._checkpoint.LATEST_VERSION``)."""


@cache
def installed(package: str) -> str | None:
    """The installed version of ``package`` (None when it is not installed)."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


@cache
def _parse(version: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in version.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit()) or "0"
        parts.append(int(digits))
        if not piece.isdigit():
            break  # a pre-release such as 1.3.0a1 counts as 1.3.0
    return tuple(parts + [0] * (3 - len(parts)))


def mismatch(packages: tuple[str, ...] = tuple(TESTED)) -> str | None:
    """Why the installed versions are outside the tested ranges, or None when they are not."""
    for package in packages:
        low, high = TESTED[package] if package in TESTED else STORAGE_TESTED[package]
        found = installed(package)
        if found is None or not low <= _parse(found) < high:
            tested = f"{package}>={'.'.join(map(str, low))},<{'.'.join(map(str, high))}"
            state = "is not installed" if found is None else f"{found} is installed"
            return f"{package} {state} (the fast path is tested with {tested})"
    return None
