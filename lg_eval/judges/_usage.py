"""Token usage and cost of judge calls, from the models' ``usage_metadata``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage


@dataclass
class Usage:
    """Model calls and tokens spent, and the cost where the provider reported one."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    details: dict[str, int] = field(default_factory=dict)
    cost: float | None = None

    def record(self, reply: AIMessage) -> None:
        self.calls += 1
        usage: dict[str, Any] = dict(reply.usage_metadata or {})
        for key in ("input_tokens", "output_tokens", "total_tokens"):
            setattr(self, key, getattr(self, key) + int(usage.get(key) or 0))
        for side in ("input", "output"):
            for key, value in (usage.get(f"{side}_token_details") or {}).items():
                if isinstance(value, int):
                    name = f"{side}_{key}"
                    self.details[name] = self.details.get(name, 0) + value
        cost = _reported_cost(reply)
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.total_tokens += other.total_tokens
        for key, value in other.details.items():
            self.details[key] = self.details.get(key, 0) + value
        if other.cost is not None:
            self.cost = (self.cost or 0.0) + other.cost

    def as_metadata(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            **self.details,
        }
        if self.cost is not None:
            data["cost"] = self.cost
        return data


def _reported_cost(reply: AIMessage) -> float | None:
    metadata = reply.response_metadata or {}
    for source in (metadata, metadata.get("token_usage") or {}, metadata.get("usage") or {}):
        cost = source.get("cost") if isinstance(source, dict) else None
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            return float(cost)
    return None
