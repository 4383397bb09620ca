"""The LangGraph Server options every command that talks to a server shares.

``--api-key`` (default ``$LANGGRAPH_API_KEY``) and ``--header NAME=VALUE`` become one
:class:`~lg_eval.server.ServerConnection` through :func:`server_connection`. Neither value
is ever echoed: a malformed ``--header`` is reported by its position only, since a header
usually carries a credential.
"""

from __future__ import annotations

from typing import Annotated

import typer

from lg_eval.cli._common import fail
from lg_eval.server import API_KEY_ENV, ServerConnection

ApiKey = Annotated[
    str | None,
    typer.Option(
        metavar="KEY", help=f"With --server: its API key (default ${API_KEY_ENV}); never shown."
    ),
]
Header = Annotated[
    list[str] | None,
    typer.Option(
        metavar="NAME=VALUE",
        help="With --server: a header sent with every request (repeatable).",
    ),
]


def parse_headers(items: list[str]) -> dict[str, str]:
    """``--header NAME=VALUE`` items as a dict; a malformed one is a usage error that
    names its position, never its text."""
    found: dict[str, str] = {}
    for number, item in enumerate(items, 1):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            fail(f"--header #{number} is not NAME=VALUE (its text is not shown)")
        found[name.strip()] = value
    return found


def server_connection(url: str, api_key: str | None, headers: list[str] | None) -> ServerConnection:
    """The connection for ``--server URL --api-key ... --header ...`` (call it inside
    :func:`~lg_eval.cli._common.input_errors`: a bad URL is an ``InvalidOptionError``)."""
    return ServerConnection(url, api_key=api_key, headers=parse_headers(headers or []))
