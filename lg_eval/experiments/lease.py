"""A lease on a run id: one live run per run id in a results store.

Two processes running the same run id at once would both play the cases left and
store each other's half-finished work as their own. So a run takes a lease before it
touches the run's record: a row in ``lg_eval_leases`` (one of the store's tables)
naming its owner — host, process id and a random token — and when it expires.
While the run lives a daemon thread renews the expiry every ``heartbeat`` seconds;
the run deletes the row when it ends.

A second run on the same id gets :class:`~lg_eval.errors.RunInUseError` naming the
owner and the expiry. A lease is stale, and taken over, when its expiry has passed
(the owner was killed or lost its store) or at once when the owner ran on this host and
its process no longer exists (``kill -9`` then resume does not wait for the expiry).
Taking over is a compare-and-set on the old token, so of two runs racing for a stale
lease exactly one wins.

The expiry and heartbeat default to 30 s and 5 s; ``LG_EVAL_LEASE_TTL`` and
``LG_EVAL_LEASE_HEARTBEAT`` (seconds) change them, e.g. for tests. Expiry times come
from each host's clock, so hosts sharing a Postgres store should keep their clocks in
step to within the expiry.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from lg_eval.errors import InvalidOptionError, RunInUseError, StoreError
from lg_eval.experiments.store import ResultStore

DEFAULT_TTL = 30.0
DEFAULT_HEARTBEAT = 5.0

_READ = "SELECT host, pid, token, expires_at FROM lg_eval_leases WHERE run_id = ?"


@dataclass(frozen=True)
class Owner:
    """Who holds a lease and until when (seconds since the epoch, the owner's clock)."""

    host: str
    pid: int
    token: str
    expires_at: float

    def describe(self) -> str:
        """``pid 123 on host h``: the owner as a message names it (never the token)."""
        return f"pid {self.pid} on host {self.host}"

    def stale(self, now: float) -> bool:
        """Whether the lease may be taken over: expired, or its process on this host is gone."""
        if self.expires_at <= now:
            return True
        return self.host == socket.gethostname() and not _alive(self.pid)


@dataclass
class Lease:
    """A held lease on ``run_id`` in ``store``, renewed by a daemon thread until released."""

    store: ResultStore
    run_id: str
    owner: Owner
    ttl: float
    heartbeat: float
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    @classmethod
    def acquire(
        cls,
        store: ResultStore,
        run_id: str,
        *,
        ttl: float | None = None,
        heartbeat: float | None = None,
    ) -> Lease:
        """Take the lease on ``run_id`` (taking over a stale one) and start renewing it.

        Raises:
            RunInUseError: another live run holds the lease (the message names its
                owner and when the lease expires).
            InvalidOptionError: ``ttl`` or ``heartbeat`` (or their environment
                variables) is not a positive number, or ``heartbeat`` is not below ``ttl``.
        """
        ttl = _seconds("ttl", ttl, "LG_EVAL_LEASE_TTL", DEFAULT_TTL)
        heartbeat = _seconds("heartbeat", heartbeat, "LG_EVAL_LEASE_HEARTBEAT", DEFAULT_HEARTBEAT)
        if heartbeat >= ttl:
            raise InvalidOptionError(
                f"heartbeat={heartbeat}: below the lease expiry ttl={ttl}, so a live run's "
                "lease is renewed before it expires."
            )
        mine = Owner(socket.gethostname(), os.getpid(), secrets.token_hex(16), 0.0)
        for _ in range(3):  # a lost race re-reads the row once more before giving up
            now = time.time()
            mine = Owner(mine.host, mine.pid, mine.token, now + ttl)
            held = _read(store, run_id)
            if held is None:
                store.execute_many(
                    "INSERT INTO lg_eval_leases (run_id, host, pid, token, expires_at)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [(run_id, mine.host, mine.pid, mine.token, mine.expires_at)],
                )
            elif held.stale(now):
                store.execute_many(
                    "UPDATE lg_eval_leases SET host = ?, pid = ?, token = ?, expires_at = ?"
                    " WHERE run_id = ? AND token = ?",
                    [(mine.host, mine.pid, mine.token, mine.expires_at, run_id, held.token)],
                )
            else:
                raise _in_use(store, run_id, held, now)
            won = _read(store, run_id)
            if won is not None and won.token == mine.token:
                lease = cls(store, run_id, mine, ttl, heartbeat)
                lease._start()
                return lease
        held = _read(store, run_id)
        raise _in_use(store, run_id, held or mine, time.time())

    def release(self) -> None:
        """Stop renewing and delete the lease (only if still ours); safe to call twice.

        A store that cannot be reached now (the reason the run is ending, often) keeps
        the row; it is stale once this process is gone or its expiry passes, so the
        store's error is left to the run to report, not raised again here."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        thread.join()
        with contextlib.suppress(StoreError):
            self.store.execute_many(
                "DELETE FROM lg_eval_leases WHERE run_id = ? AND token = ?",
                [(self.run_id, self.owner.token)],
            )

    def _start(self) -> None:
        self._thread = threading.Thread(
            target=self._renew, name=f"lg-eval-lease-{self.run_id}", daemon=True
        )
        self._thread.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.heartbeat):
            try:
                self.store.execute_many(
                    "UPDATE lg_eval_leases SET expires_at = ? WHERE run_id = ? AND token = ?",
                    [(time.time() + self.ttl, self.run_id, self.owner.token)],
                )
            except Exception:
                continue  # a store that is down now may be back by the next beat


def _read(store: ResultStore, run_id: str) -> Owner | None:
    rows = store.query(_READ, (run_id,))
    if not rows:
        return None
    host, pid, token, expires_at = rows[0]
    return Owner(str(host), int(pid), str(token), float(expires_at))


def _in_use(store: ResultStore, run_id: str, held: Owner, now: float) -> RunInUseError:
    expires = datetime.fromtimestamp(held.expires_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    left = max(0.0, held.expires_at - now)
    return RunInUseError(
        f"Run {run_id!r} in {store.url} is in use by another live run ({held.describe()}); "
        f"its lease expires at {expires} (in {left:.0f} s) unless that run renews it. Wait "
        "for it to finish, or choose another --run-id.",
        owner=held.describe(),
    )


def _seconds(name: str, value: float | None, variable: str, default: float) -> float:
    if value is None:
        raw = os.environ.get(variable)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        where = f"{variable}={raw!r}"
    else:
        where = f"{name}={value!r}"
    if isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise InvalidOptionError(f"{where}: a positive, finite number of seconds.")
    return float(value)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host and is not a zombie (killed, not reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    except OSError:
        return True  # cannot tell: assume alive, the expiry still frees the lease
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            state = stat.read().rpartition(")")[2].split()
    except OSError:
        return True  # no /proc (macOS): os.kill is the answer
    return not (state and state[0] in {"Z", "X"})


__all__ = ["DEFAULT_HEARTBEAT", "DEFAULT_TTL", "Lease", "Owner"]
