"""``lg-eval view``: browse a results store in a local, read-only web app."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lg_eval.cli import _options as shared
from lg_eval.cli._common import INPUT_ERROR, fail, input_errors, say
from lg_eval.errors import LgEvalError
from lg_eval.urls import parse_checkpointer_url

DEFAULT_PORT = 7575
DEFAULT_STORE_PATH = Path(".lg_eval") / "results.sqlite"


def view(
    store: shared.Store = None,
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free port).")
    ] = DEFAULT_PORT,
    host: Annotated[
        str,
        typer.Option(
            help="Address to bind. The default, 127.0.0.1, keeps the viewer on this machine; "
            "the viewer has no login, so bind another address only on a network you trust."
        ),
    ] = "127.0.0.1",
) -> None:
    """Open a web viewer over the results store: runs and their trend, a run's evaluators,
    charts and cases (failing first, filters, search), each case's turns, trajectory
    against the reference and feedback, and two runs compared case by case.

    Read-only; serves until interrupted (Ctrl-C). Exit 2 when the store cannot be opened
    or the port cannot be bound.
    """
    from lg_eval.viewer import make_viewer

    _must_exist(store)
    with input_errors():
        try:
            server = make_viewer(store, host=host, port=port)
        except OSError as exc:
            fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", INPUT_ERROR)
    say(f"lg-eval view: {server.pages.store.url} at {server.url}")  # the store opened, redacted
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _must_exist(store: str | None) -> None:
    """A SQLite store must be there already: the viewer would otherwise create an empty one."""
    if store is None:
        path: Path | None = DEFAULT_STORE_PATH
    else:
        try:
            parsed = parse_checkpointer_url(store)
        except LgEvalError:
            return  # not a URL of that form (a bare path, ...): open_store judges it
        path = parsed.path if parsed.kind == "sqlite" else None
    if path is not None and not path.exists():
        fail(f"no results store at {path}; run `lg-eval run` first or pass --store")


__all__ = ["view"]
