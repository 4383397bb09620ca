"""Type aliases shared by the player modules (LangGraph's classes are generic)."""

from __future__ import annotations

from typing import Any, TypeAlias

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel

Graph: TypeAlias = Pregel[Any, Any, Any, Any]
"""Any compiled LangGraph graph (a ``StateGraph`` compiled, or an ``@entrypoint``)."""
Saver: TypeAlias = BaseCheckpointSaver[Any]
"""Any checkpointer."""
