"""The one place the runner meets ``lg_eval.datasets``, ``lg_eval.play`` and ``lg_eval.urls``.

Those packages are being written in another branch; until they are merged this
module holds minimal stand-ins with the same names and shapes (a subset of the
turn kinds: input, resume, continue). Swapping is replacing this module's body
with re-exports; nothing else in :mod:`lg_eval.experiments` imports them.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field, model_validator

from lg_eval._effects import Core, Effect, adrive, drive
from lg_eval.errors import InvalidOptionError, LgEvalError
from lg_eval.trajectory import GraphTrajectory

# --------------------------------------------------------------------------- datasets


class DatasetError(LgEvalError, ValueError):
    """A dataset file or model is invalid."""


class ScriptMismatchError(LgEvalError):
    """A played case's graph did not ask what its script expected."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCallExpectation(_Model):
    name: str
    args: dict[str, Any] | None = None


class OutputMatch(_Model):
    contains: list[str] | None = None
    equals: str | None = None


class Expected(_Model):
    trajectory: GraphTrajectory | None = None
    tool_calls: list[ToolCallExpectation] | None = None
    output: str | OutputMatch | None = None
    max_steps: int | None = None


class EvaluatorRef(_Model):
    name: str
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        return {"name": data} if isinstance(data, str) else data


class Turn(_Model):
    """``{"input": ...}``, ``{"resume": ...}`` or ``{"continue": true}``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    input: Any = None
    resume: Any = None
    continue_: bool = Field(default=False, alias="continue")

    @property
    def kind(self) -> str:
        if self.input is not None:
            return "input"
        return "resume" if self.resume is not None else "continue"


class Case(_Model):
    id: str
    tags: list[str] = Field(default_factory=list)
    turns: list[Turn]
    expected: Expected = Field(default_factory=Expected)
    evaluators: list[EvaluatorRef] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Dataset(_Model):
    name: str
    graph: str | None = None
    evaluators: list[EvaluatorRef] = Field(default_factory=list)
    cases: list[Case] = Field(default_factory=list)
    source: Path | None = Field(default=None, exclude=True)
    allows_code: bool = Field(default=False, exclude=True)


def load_dataset(path: str | Path) -> Dataset:
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Dataset.model_validate({**data, "source": path, "allows_code": True})
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise DatasetError(f"{path}: {exc}") from exc


def dataset_hash(dataset: Dataset) -> str:
    document = dataset.model_dump(mode="json", by_alias=True)
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- urls


def redact_url(url: str) -> str:
    scheme, sep, rest = str(url).partition("://")
    at = rest.rfind("@")
    if sep and at != -1:
        user, colon, _ = rest[:at].partition(":")
        if colon:
            return f"{scheme}{sep}{user}:***@{rest[at + 1 :]}"
    return str(url)


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///rel`` / ``sqlite:////abs`` URL (None: not SQLite)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return Path(url)
    if scheme.lower() != "sqlite":
        return None
    if not rest.startswith("/") or len(rest) < 2:
        raise InvalidOptionError(f"{url!r}: write sqlite:///relative.sqlite or sqlite:////abs.")
    return Path(rest[1:])


def is_postgres(url: str) -> bool:
    return url.partition("://")[0].lower() in ("postgresql", "postgres")


DEFAULT_CHECKPOINTER = "sqlite:///.lg_eval/checkpoints.sqlite"


# --------------------------------------------------------------------------- play


@contextmanager
def open_checkpointer(url: str | None = None) -> Iterator[BaseCheckpointSaver[Any]]:
    url = url or DEFAULT_CHECKPOINTER
    if is_postgres(url):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = sqlite_path(url)
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


@asynccontextmanager
async def aopen_checkpointer(url: str | None = None) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    url = url or DEFAULT_CHECKPOINTER
    if is_postgres(url):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(url) as saver:
            await saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = sqlite_path(url)
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(path)) as asaver:
        yield asaver


def resolve_target(
    target: Any, checkpointer: BaseCheckpointSaver[Any], *, allow_code: bool = True
) -> Pregel[Any, Any, Any, Any]:
    if isinstance(target, str):
        if not allow_code:
            raise InvalidOptionError(f"target {target!r} is code and the dataset allows none.")
        module, _, attr = target.partition(":")
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        target = obj
    if isinstance(target, StateGraph):
        return target.compile(checkpointer=checkpointer)
    if isinstance(target, Pregel):
        return target.copy(update={"checkpointer": checkpointer})
    if callable(target):
        return resolve_target(target(checkpointer=checkpointer), checkpointer)
    raise InvalidOptionError(f"target {target!r} is not a graph, builder or factory.")


class PlayedTurn(_Model):
    index: int
    kind: str
    sent: Any = None
    asked: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None


class PlayedCase(_Model):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    thread_id: str
    config: dict[str, Any]
    turns: list[PlayedTurn] = Field(default_factory=list)


def _playing(graph: Pregel[Any, Any, Any, Any], case: Case, thread_id: str) -> Core[PlayedCase]:
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    played = PlayedCase(thread_id=thread_id, config=dict(config))
    pending: list[dict[str, Any]] = []
    for index, turn in enumerate(case.turns):
        kind = turn.kind
        if kind == "resume" and not pending:
            raise ScriptMismatchError(f"turns[{index}] resumes, but nothing is pending.")
        if kind == "input":
            payload: Any = turn.input
        else:
            payload = Command(resume=turn.resume) if kind == "resume" else None
        sent = turn.input if kind == "input" else turn.resume
        error = None
        try:
            yield Effect(
                functools.partial(graph.invoke, payload, config),
                functools.partial(graph.ainvoke, payload, config),
            )
        except Exception as exc:
            if type(exc).__name__ == "OperationalError" or isinstance(exc, ConnectionError):
                raise
            error = f"{type(exc).__name__}: {exc}"
        state = yield Effect(lambda: graph.get_state(config), lambda: graph.aget_state(config))
        pending = [
            {"id": i.id, "path": "", "value": i.value} for i in getattr(state, "interrupts", ())
        ]
        played.turns.append(
            PlayedTurn(index=index, kind=kind, sent=sent, asked=pending, error=error)
        )
    return played


def play_case(graph: Pregel[Any, Any, Any, Any], case: Case, *, thread_id: str) -> PlayedCase:
    return drive(_playing(graph, case, thread_id))


async def aplay_case(
    graph: Pregel[Any, Any, Any, Any], case: Case, *, thread_id: str
) -> PlayedCase:
    return await adrive(_playing(graph, case, thread_id))


__all__ = [
    "DEFAULT_CHECKPOINTER",
    "Case",
    "Dataset",
    "DatasetError",
    "EvaluatorRef",
    "Expected",
    "PlayedCase",
    "ScriptMismatchError",
    "aopen_checkpointer",
    "aplay_case",
    "dataset_hash",
    "is_postgres",
    "load_dataset",
    "open_checkpointer",
    "play_case",
    "redact_url",
    "resolve_target",
    "sqlite_path",
]
