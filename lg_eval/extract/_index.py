"""Checkpoints grouped for the assembler: lineage walks and the subgraph checkpoints
each task wrote (one lineage per invocation of the subgraph)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from lg_eval.extract._records import (
    ROOT_NS,
    CheckpointRecord,
    TaskRecord,
    ThreadRecords,
    call_counter,
    namespace_owner,
    parent_namespace,
)


class CheckpointIndex:
    """Checkpoints grouped for lineage walks and subgraph look-ups."""

    def __init__(self, records: ThreadRecords) -> None:
        self.by_id: dict[str, dict[str, CheckpointRecord]] = {
            ns: {r.id: r for r in recs} for ns, recs in records.by_ns.items()
        }
        # (parent namespace, owner node, owner task id or None) -> subgraph namespaces
        self.owned: dict[tuple[str, str, str | None], list[str]] = defaultdict(list)
        # (namespace, checkpoint id) of checkpoints a run went on from -> their loop children,
        # on every branch (time travel leaves a run's first branch beside the newest one)
        self.ran_from: dict[tuple[str, str], list[CheckpointRecord]] = defaultdict(list)
        for ns, recs in records.by_ns.items():
            for r in recs:
                if r.source == "loop" and r.parent_id is not None:
                    self.ran_from[(ns, r.parent_id)].append(r)
        # (subgraph namespace, id of the parent checkpoint that ran it) -> its checkpoints
        self.under: dict[tuple[str, str], list[CheckpointRecord]] = defaultdict(list)
        for ns, recs in records.by_ns.items():
            if ns == ROOT_NS:
                continue
            parent_ns = parent_namespace(ns)
            self.owned[(parent_ns, *namespace_owner(ns))].append(ns)
            for record in recs:
                if parent_ns in record.parents:
                    self.under[(ns, record.parents[parent_ns])].append(record)

    def lineage(
        self, ns: str, tip_id: str, keep: Callable[[CheckpointRecord], bool]
    ) -> list[CheckpointRecord]:
        """Checkpoints from the oldest ancestor to ``tip_id`` (following parent links)."""
        known = self.by_id.get(ns, {})
        chain: list[CheckpointRecord] = []
        current = known.get(tip_id)
        while current is not None and keep(current):
            chain.append(current)
            current = known.get(current.parent_id) if current.parent_id else None
        chain.reverse()
        return chain

    def child_lineages(
        self, parent: CheckpointRecord, task: TaskRecord
    ) -> list[list[CheckpointRecord]]:
        """The subgraph checkpoints a task at ``parent`` wrote, oldest first: one lineage per
        invocation of the subgraph by the task (``|N`` call counters), in call order."""
        for key in ((parent.ns, task.name, task.id), (parent.ns, task.name, None)):
            # the second key: checkpointer=True subgraphs (namespaces without task ids)
            found = []
            for ns in self.owned.get(key, ()):
                mine = self.under.get((ns, parent.id))
                if mine:
                    tip = max(mine, key=lambda r: r.id)
                    lineage = self.lineage(
                        ns, tip.id, lambda r: r.parents.get(parent.ns) == parent.id
                    )
                    found.append((call_counter(ns), lineage))
            if found:
                if len(found) > 1:
                    found.sort(key=lambda pair: pair[0])
                return [lineage for _, lineage in found]
        return []
