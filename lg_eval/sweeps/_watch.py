"""``Watch``: keep sweeping a checkpointer or a LangGraph Server as its threads change.

A watch is a loop around :func:`~lg_eval.sweeps.sweep_threads`. Each :meth:`Watch.poll`
asks the source which threads changed since the last poll (:mod:`lg_eval.sweeps._changes`:
the rows written since a cursor, or the server's threads updated since), looks again at the
threads it saw running, and keeps those that pass the sample and whose newest checkpoint
the sweep has not scored yet. Of those, a thread whose run stopped
(:mod:`lg_eval.sweeps._settle`: finished, waiting at an interrupt, raised, at a static
breakpoint), or that has written nothing for ``idle`` seconds, is scored now; one still
running waits for a later poll. The settled threads go to ``sweep_threads(heads=...)``:
the same scoring step, the same store and the same incremental state as every sweep of the
same name, so the viewer lists each pass that scored something as a run of the sweep
(``sweep:<name>``), with the trend across them, and a thread is scored once per checkpoint
whatever the watch processes that come and go.

The first poll, and one every ``reconcile`` seconds, lists every thread instead (what
changed while no watch ran; rows a cursor cannot see). A poll of an idle store reads no
thread (docs/performance.md has the numbers). One watch per sweep name: a second one on
the same store is refused (:class:`~lg_eval.errors.RunInUseError`) while the first lives.

After a pass that stored results, the :class:`~lg_eval.sweeps._alerts.Alert` s are checked.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Annotated, Any, Unpack, cast

from annotated_types import Ge
from pydantic import Field, SkipValidation, Strict

from lg_eval._arguments import Count, Delay, validated
from lg_eval.errors import InvalidOptionError, RunInUseError
from lg_eval.executors import get_executor
from lg_eval.experiments import Lease, Redactor, ResultStore, open_store
from lg_eval.sweeps._alerts import Alert, AlertState, Fired, check_alerts
from lg_eval.sweeps._changes import CheckpointChanges
from lg_eval.sweeps._listing import ThreadHead, checkpoint_time, in_sample
from lg_eval.sweeps._options import SweepOptions
from lg_eval.sweeps._result import SweepResult
from lg_eval.sweeps._settle import Reason
from lg_eval.sweeps._sources import CheckpointSource, Filters, ServerSource, Source
from lg_eval.sweeps._state import SweepState
from lg_eval.sweeps._sweep import is_local, open_saver, server_of, sweep_label, swept


@dataclass(frozen=True)
class WatchPass:
    """One poll of a watch: what it looked at, and what it scored."""

    at: datetime
    listed: bool
    """Whether this poll listed every thread (the first, a reconcile, or a cursor that
    could not tell) rather than only those that changed."""
    seen: int
    """Threads looked at: new or changed since the sweep last scored them."""
    waiting: int
    """Of those, threads still running, looked at again by the next poll."""
    stopped: dict[str, int]
    """The threads this poll sent to be scored, by why their run stopped (``finished``,
    ``interrupted``, ``error``, ``breakpoint``, ``idle``)."""
    result: SweepResult | None
    """The sweep of the settled threads (None: none settled)."""
    fired: list[Fired] = field(default_factory=list)

    @property
    def scored(self) -> int:
        """Threads scored by this poll."""
        return 0 if self.result is None or not self.result.stored else self.result.scored


@dataclass
class WatchTotals:
    """What a watch did until it stopped: polls, threads scored, alerts fired."""

    passes: int = 0
    scored: int = 0
    runs: list[str] = field(default_factory=list)
    fired: int = 0


class Watch:
    """A watch over ``checkpointer`` (SqliteSaver / PostgresSaver, or their URL) or a
    LangGraph Server (``server=``): use it as a context manager, then :meth:`poll` once or
    :meth:`run` until stopped.

    ``options`` (:class:`~lg_eval.sweeps.SweepOptions`) mean what they mean for
    :func:`~lg_eval.sweeps.sweep_threads`, and are checked when the watch is made, each
    pass a run of its own (``run_id`` goes with a single sweep). ``judge_budget``: at most
    this many judge requests in any rolling hour, across every pass (a request that does
    not fit waits; lower ``sample`` to keep up with traffic).

    ``idle``: seconds after which a thread that neither finished nor paused (its process
    died mid-run) is scored anyway. ``reconcile``: seconds between listings of every
    thread. ``margin``: seconds of Postgres checkpoints read again by each poll (commits
    that land late, clocks a little apart). ``alerts``: :class:`Alert` s (or dicts)
    checked after each pass that stored results. ``clock``: seconds since the epoch (the
    idle and reconcile times; tests pass their own).

    Raises:
        InvalidOptionError: a bad option (named), as :func:`sweep_threads` raises it.
        RunInUseError: another live watch of the same sweep name uses the store.
    """

    @validated
    def __init__(
        self,
        graph: Any = None,
        checkpointer: Any = None,
        *,
        idle: Delay = 300.0,
        reconcile: Annotated[float, Strict(), Ge(1), Field(allow_inf_nan=False)] = 3600.0,
        margin: Delay = 60.0,
        alerts: SkipValidation[Sequence[Alert | dict[str, Any]]] = (),
        clock: Callable[[], float] = time.time,
        **options: Unpack[SweepOptions],
    ) -> None:
        if options.get("run_id") is not None:
            raise InvalidOptionError(
                "run_id goes with a single sweep: a watch stores a run a pass."
            )
        self.idle, self.reconcile, self.margin = idle, reconcile, margin
        self.alerts = [Alert.of(alert) for alert in alerts]
        self._runner = get_executor(options["executor"], address=options.get("ray_address"))
        server = options.get("server")
        self._connection = server_of(server, False, checkpointer) if server else None
        assistant_id = options.get("assistant_id")
        self.name = options.get("name") or sweep_label(graph, self._connection, assistant_id)
        self.sweep = f"sweep:{self.name}"
        self._redactor = cast(Redactor | None, options.get("redact"))
        self._graph, self._checkpointer = graph, checkpointer
        self._options: SweepOptions = {
            **options,
            "server": self._connection,
            "executor": self._runner,
            "name": self.name,
        }
        self._filters = Filters(
            since=cast(datetime | None, options.get("since")),
            until=cast(datetime | None, options.get("until")),
            metadata=options.get("metadata"),
            assistant_id=assistant_id,
            status=options.get("status"),
            page_size=options["page_size"],
        )
        self.sample = options.get("sample")
        self._clock = clock
        self._stack = ExitStack()
        self._source: Source | None = None
        self._store: ResultStore | None = None
        self._state: SweepState | None = None
        self._waiting: dict[str, ThreadHead] = {}
        self._listed_at: float | None = None
        self._alert_state = AlertState()

    # ------------------------------------------------------------------ opening

    def __enter__(self) -> Watch:
        try:
            self._open()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the watch's lease and close what it opened (safe to call twice)."""
        self._stack.close()

    def _open(self) -> None:
        stack = self._stack
        store = self._options.get("store")
        self._store = (
            store if isinstance(store, ResultStore) else stack.enter_context(open_store(store))
        )
        self._state = SweepState(self._store)
        remote = not is_local(self._runner)
        if self._connection is not None:
            self._target, self._saver = self._graph, None
            self._sweep(iter(()))  # every sweep option checked now, before the first poll
            self._source = ServerSource(self._connection, self._filters, self.margin)
        else:
            saver, bound = open_saver(stack, self._graph, self._checkpointer)
            # workers of another executor open the checkpointer (and the graph) by name
            self._target = self._graph if remote else bound
            self._saver = self._checkpointer if remote else saver
            self._sweep(iter(()))  # every sweep option checked now, before the first poll
            changes = CheckpointChanges(saver, self.margin)
            self._source = CheckpointSource(changes, bound, self._filters)
        try:
            lease = Lease.acquire(self._store, f"watch:{self.sweep}")
        except RunInUseError as exc:
            raise RunInUseError(
                f"Another watch of sweep {self.name!r} is running on {self._store.url} "
                f"({exc.owner}); stop it first, or give this watch another name.",
                owner=exc.owner,
            ) from None
        stack.callback(lease.release)

    def _sweep(self, heads: Iterator[list[ThreadHead]]) -> SweepResult:
        assert self._store is not None
        options: SweepOptions = {**self._options, "store": self._store}
        return swept(self._target, self._saver, options, heads)

    # ------------------------------------------------------------------ polling

    def poll(self) -> WatchPass:
        """Look once: score the threads that changed and settled since the last poll
        (every thread not scored yet on the first), then check the alerts."""
        source, state = self._source, self._state
        if source is None or state is None or self._store is None:
            raise InvalidOptionError("Watch.poll: open the watch first (with Watch(...) as w).")
        now = self._clock()
        listed = self._listed_at is None or now - self._listed_at >= self.reconcile
        pages = None if listed else source.changed(self._waiting)
        if pages is None:
            listed = True
            source.start()  # what is written from here on, the next poll sees
            self._listed_at = now
            pages = source.everything()
        counts: Counter[str] = Counter()
        waiting: dict[str, ThreadHead] = {}
        settled = self._settled(pages, now, counts, waiting)
        first = next(settled, None)
        result = None if first is None else self._sweep(_chained(first, settled))
        self._waiting = waiting
        fired: list[Fired] = []
        if result is not None and result.stored and self.alerts:
            fired = check_alerts(
                self.alerts, self._store, self.sweep, self._alert_state, self._redactor
            )
        return WatchPass(
            at=datetime.fromtimestamp(now, UTC),
            listed=listed,
            seen=counts.pop("seen", 0),
            waiting=len(waiting),
            stopped=dict(counts),
            result=result,
            fired=fired,
        )

    def _settled(
        self,
        pages: Iterator[list[ThreadHead]],
        now: float,
        counts: Counter[str],
        waiting: dict[str, ThreadHead],
    ) -> Iterator[list[ThreadHead]]:
        """Pages of the threads to score now: sampled, not scored at their newest checkpoint
        yet, and stopped (or idle); the others still running go to ``waiting``."""
        assert self._source is not None and self._state is not None
        for page in pages:
            heads = [h for h in page if in_sample(h.thread_id, self.sample)]
            scored = self._state.scored(self.sweep, [h.thread_id for h in heads])
            ready = []
            for head in heads:
                mark = scored.get(head.thread_id)
                if mark is not None and mark >= head.checkpoint_id:
                    continue
                counts["seen"] += 1
                reason = self._reason(head, now)
                if reason is None:
                    waiting[head.thread_id] = head
                else:
                    counts[reason] += 1
                    ready.append(head)
            if ready:
                yield ready

    def _reason(self, head: ThreadHead, now: float) -> Reason | None:
        assert self._source is not None
        reason = self._source.reason(head)
        if reason is None and now - checkpoint_time(head.checkpoint_id).timestamp() >= self.idle:
            return "idle" if self._source.idles else None
        return reason

    @validated
    def run(
        self,
        *,
        every: Delay = 30.0,
        stop: threading.Event | None = None,
        passes: Count | None = None,
        on_pass: Callable[[WatchPass], None] | None = None,
    ) -> WatchTotals:
        """Poll every ``every`` seconds until ``stop`` is set (or ``passes`` polls were
        made), calling ``on_pass`` after each. Ctrl-C (KeyboardInterrupt) stops it too:
        the pass in hand records its run as interrupted, what it stored stays, and the next
        watch goes on from there."""
        stop = stop or threading.Event()
        totals = WatchTotals()
        while not stop.is_set():
            done = self.poll()
            totals.passes += 1
            totals.scored += done.scored
            totals.fired += len(done.fired)
            if done.scored and done.result is not None:
                totals.runs.append(done.result.info.run_id)
            if on_pass is not None:
                on_pass(done)
            if passes is not None and totals.passes >= passes:
                break
            stop.wait(every)
        return totals


def _chained(
    first: list[ThreadHead], rest: Iterator[list[ThreadHead]]
) -> Iterator[list[ThreadHead]]:
    yield first
    yield from rest
