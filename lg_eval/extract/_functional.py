"""Name the ``@task`` calls of Functional API (``@entrypoint``) threads.

LangGraph runs each ``@task`` call as a task of its own, but no public API
lists those tasks: the checkpoint only keeps their writes under a task id. The
id is a hash of the checkpoint, the entrypoint task's namespace, the call's
name and its position among the entrypoint's calls, so we rebuild it for every
``@task`` the entrypoint can reach and match. A call whose id matches no
candidate keeps a clear placeholder name (and the extractor warns), so a name
is never guessed.
"""

from __future__ import annotations

import binascii
import inspect
from collections.abc import Iterable, Iterator
from typing import Any

from lg_eval.extract._records import NS_SEP, PULL, PUSH, task_namespace

UNRESOLVED = "<unnamed @task>"


def task_candidates(graph: Any, entry_name: str) -> list[str]:
    """Names of the ``@task`` functions an entrypoint's code refers to."""
    node = getattr(graph, "nodes", {}).get(entry_name)
    bound = getattr(node, "bound", None)
    funcs = [f for f in (getattr(bound, "func", None), getattr(bound, "afunc", None)) if f]
    names: list[str] = []
    for func in funcs:
        for obj in _referenced(func):
            name = _task_name(obj)
            if name and name not in names:
                names.append(name)
    return names


def _referenced(func: Any) -> Iterator[Any]:
    func = inspect.unwrap(func)
    code = getattr(func, "__code__", None)
    if code is None:
        return
    scope = dict(getattr(func, "__globals__", {}))
    closure = getattr(func, "__closure__", None) or ()
    for var, cell in zip(code.co_freevars, closure, strict=False):
        try:
            scope[var] = cell.cell_contents
        except ValueError:  # empty cell
            continue
    for name in (*code.co_names, *code.co_freevars):
        if name in scope:
            yield scope[name]


def _task_name(obj: Any) -> str | None:
    if type(obj).__name__ != "_TaskFunction":
        return None
    func = getattr(obj, "func", None)
    return getattr(obj, "name", None) or getattr(func, "__name__", None)


def call_task_id(
    checkpoint_id: str, step: int, entry_ns: str, entry_name: str, name: str, index: int
) -> str | None:
    """The id LangGraph gives the ``index``-th call of ``@task`` ``name`` in an entrypoint."""
    try:
        from langgraph.pregel._algo import _xxhash_str  # internal: version-checked by tests
    except ImportError:  # pragma: no cover - depends on the installed LangGraph
        return None
    id_bytes = binascii.unhexlify(checkpoint_id.replace("-", ""))
    return _xxhash_str(
        id_bytes,
        f"{entry_ns}{NS_SEP}{name}",
        str(step + 1),
        name,
        PUSH,
        f"~{PULL}, {entry_name}",
        str(index),
    )


def resolve_calls(
    checkpoint_id: str,
    checkpoint_ns: str,
    step: int,
    entry_name: str,
    entry_id: str,
    call_ids: Iterable[str],
    candidates: list[str],
) -> dict[str, tuple[str, int | None]]:
    """Map each call task id to ``(name, call index)``; unmatched ids get a placeholder."""
    wanted = set(call_ids)
    entry_ns = task_namespace(checkpoint_ns, entry_name, entry_id)
    found: dict[str, tuple[str, int | None]] = {}
    for index in range(len(wanted) + 16):
        for name in candidates:
            task_id = call_task_id(checkpoint_id, step, entry_ns, entry_name, name, index)
            if task_id in wanted and task_id not in found:
                found[task_id] = (name, index)
        if len(found) == len(wanted):
            break
    for task_id in wanted - found.keys():
        found[task_id] = (UNRESOLVED, None)
    return found
