"""``lg-eval view``: browse a results store in a local web app (read-only but for labels)."""

from __future__ import annotations

from typing import Annotated

import typer

from lg_eval.cli import _options as shared
from lg_eval.cli._common import INPUT_ERROR, fail, input_errors, say
from lg_eval.cli._read_only import existing_store

DEFAULT_PORT = 7575


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
    labeler: Annotated[
        str | None,
        typer.Option(
            help="Who the labels saved from the case pages are from (default: your login name)."
        ),
    ] = None,
) -> None:
    """Open a web viewer over the results store: runs and their trend, a run's evaluators,
    charts and cases (failing first, filters, search), each case's turns, trajectory
    against the reference and feedback, and two runs compared case by case.

    Read-only but for one form: on a viewer bound to this machine, a case's page labels it
    pass or fail with a note (a person's label, kept in the store; see lg-eval calibrate).
    Serves until interrupted (Ctrl-C). Exit 2 when the store cannot be opened or the port
    cannot be bound.
    """
    from lg_eval.viewer import make_viewer

    existing_store(store)
    with input_errors():
        try:
            server = make_viewer(store, host=host, port=port, labeler=labeler)
        except OSError as exc:
            fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", INPUT_ERROR)
    say(f"lg-eval view: {server.pages.store.url} at {server.url}")  # the store opened, redacted
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
