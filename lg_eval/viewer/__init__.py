"""The results viewer: a local, read-only web app over a results store (``lg-eval view``).

Pages: the runs (pass rate and its trend across runs of the same dataset), a run (its
evaluators, latency/token/cost charts, cases worst first with filters and search), a
case (each turn as a conversation, the trajectory per turn against the reference,
every feedback, the tool calls), and two runs compared case by case. Each page is a few
paged SQL queries (:mod:`lg_eval.viewer._queries`), so a 100,000-case run opens as fast
as a small one and memory stays bounded; every page has its own URL.

Served by the standard library's threading HTTP server on 127.0.0.1, each request on a
connection of its own (a slow search holds up no other page), rendered by jinja2
with autoescaping, with no script and a Content-Security-Policy that loads nothing but
the viewer's own stylesheet. It writes one thing: a person's label of a case, from the case
page's form (POST, from this machine, with the session's token; see
:mod:`lg_eval.viewer._server`), and shows each labelled judge's agreement with people.
"""

from __future__ import annotations

from lg_eval.experiments import ResultStore, open_store
from lg_eval.viewer._pages import Page, Pages
from lg_eval.viewer._server import CSP, ViewerServer, default_labeler


def make_viewer(
    store: ResultStore | str | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    labeler: str | None = None,
) -> ViewerServer:
    """A viewer over ``store`` (a store or its URL; default ``.lg_eval/results.sqlite``)
    bound to ``host:port`` and not yet serving: call ``serve_forever()`` or ``start()``.

    Bound to a loopback address, the case page carries the label form, whose labels are
    ``labeler``'s (default: the user running it); bound elsewhere, the viewer is read-only.

    Raises:
        StoreError: the store cannot be opened.
        OSError: the address is in use or cannot be bound.
    """
    opened = store if isinstance(store, ResultStore) else open_store(store)
    pages = Pages(opened, opener=opened.reopen, labeler=labeler or default_labeler())
    return ViewerServer(pages, host, port)


__all__ = ["CSP", "Page", "Pages", "ViewerServer", "make_viewer"]
