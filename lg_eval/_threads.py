"""Calls in daemon threads: waited for with a timeout, or awaited, never keeping a process alive.

``concurrent.futures`` workers and ``asyncio.to_thread`` use threads that are
joined at interpreter exit (and by ``asyncio.run``), so a call that hangs there
hangs the process after its work is done. Judges' model calls and eval nodes'
evaluators use these instead: an abandoned call's thread is a daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class _Box:
    """The outcome of a call made in another thread."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


def _start(call: Callable[[], Any], name: str, on_done: Callable[[_Box], None] | None) -> _Box:
    box = _Box()
    context = contextvars.copy_context()  # tracing and LangGraph config follow the call

    def target() -> None:
        try:
            box.value = context.run(call)
        except BaseException as exc:  # handed to the waiting thread
            box.error = exc
        finally:
            box.done.set()
            if on_done is not None:
                on_done(box)

    threading.Thread(target=target, name=name, daemon=True).start()
    return box


def run_in_daemon(
    call: Callable[[], T],
    timeout: float | None,
    *,
    name: str = "lg-eval-call",
    on_timeout: Callable[[], BaseException] | None = None,
) -> T:
    """``call()`` in a daemon thread, waited for at most ``timeout`` seconds.

    The result or exception is handed back; after ``timeout`` the thread is
    abandoned (it cannot be stopped, but being a daemon it never keeps the
    process alive) and ``on_timeout()`` is raised (default ``TimeoutError``).
    """
    box = _start(call, name, None)
    if not box.done.wait(timeout):
        if on_timeout is not None:
            raise on_timeout()
        raise TimeoutError(f"the call did not finish within {timeout} seconds")
    if box.error is not None:
        raise box.error
    return box.value  # type: ignore[no-any-return]


async def athread(call: Callable[[], T], *, name: str = "lg-eval-call") -> T:
    """Await ``call()`` run in a daemon thread (unlike ``asyncio.to_thread``, whose
    default-executor worker would be joined at exit, and by ``asyncio.run``, if it hangs).

    Cancelling the await abandons the thread.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(box: _Box) -> None:
        if not future.done():
            if box.error is not None:
                future.set_exception(box.error)
            else:
                future.set_result(box.value)

    def hand_over(box: _Box) -> None:
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            loop.call_soon_threadsafe(settle, box)

    _start(call, name, hand_over)
    return await future  # type: ignore[no-any-return]


__all__ = ["athread", "run_in_daemon"]
