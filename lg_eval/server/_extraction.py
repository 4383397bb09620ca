"""The one core that reads a server thread into a trajectory (sync and async entry points,
and the server target of experiments, drive it)."""

from __future__ import annotations

import warnings
from typing import Any

from lg_eval._effects import Core
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import InvalidConfigError
from lg_eval.extract._assemble import assemble
from lg_eval.extract._thread import ExtractionWarning
from lg_eval.server._connection import ServerConnection
from lg_eval.server._history import read_server


def server_extraction(
    server: ServerConnection,
    thread_id: str,
    checkpoint_id: str | None,
    graph: Any,
    *,
    warn: bool = True,
) -> Core[ThreadTrajectory]:
    """Read thread ``thread_id`` of ``server`` and assemble it (warnings are emitted as
    :class:`~lg_eval.extract._thread.ExtractionWarning`, unless ``warn=False`` leaves them
    to the caller)."""
    if not isinstance(thread_id, str) or not thread_id:
        raise InvalidConfigError(
            f"thread_id={thread_id!r}: expected the id of a thread on the server (a UUID "
            "string, as client.threads.search() lists them)."
        )
    records = yield from read_server(server, thread_id, checkpoint_id, graph)
    trajectory = assemble(records)
    for message in trajectory.warnings if warn else ():
        warnings.warn(message, ExtractionWarning, stacklevel=4)
    return trajectory
