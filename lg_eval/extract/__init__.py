"""Extractors: checkpointed LangGraph threads to trajectories."""

from lg_eval.extract.thread import ExtractionWarning, aextract_thread, extract_thread

__all__ = ["ExtractionWarning", "aextract_thread", "extract_thread"]
