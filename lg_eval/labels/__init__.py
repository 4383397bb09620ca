"""People's labels, kept in the results store, and a judge's agreement with them.

* :class:`Label`: a person's verdict (or score) and note on a run's case or a thread (a
  turn of it, one action in it), who gave it and when;
* where labels come from: the decisions inside checkpointed threads
  (:func:`harvest_labels` from a checkpointer, :func:`harvest_server_labels` from a
  LangGraph Server, :func:`labels_from_thread` from one extracted thread: an interrupt's
  approve, edit or reject per action request, the evaluation graph's review), the viewer's
  label form, and files (:func:`read_label_file`, CSV or JSONL);
* :func:`save_labels` / :func:`load_labels`: the store's ``lg_eval_labels`` table;
* :func:`calibrate`: a key's verdicts against the labels (confusion, TPR/TNR, precision,
  Cohen's kappa, Krippendorff's alpha, intervals over cases) and every disagreement with
  both sides' reasoning; :func:`judge_gate_problems` is what ``--min-judge-kappa`` asks;
* :func:`correction_examples`: the disagreements as few-shot examples for the judge, from
  one side of a fixed split (:func:`label_split`), measured again on the other.

The agreement math is :mod:`lg_eval.calibration`'s; this package pairs what the store
holds. See ``docs/judges.md`` (Calibration).
"""

from lg_eval.labels._calibrate import Calibration, Disagreement, calibrate
from lg_eval.labels._corrections import MAX_EXAMPLES, Corrections, correction_examples
from lg_eval.labels._files import read_label_file
from lg_eval.labels._gates import judge_gate_problems
from lg_eval.labels._harvest import (
    ACTION_KEY,
    REVIEW_KEY,
    REVIEWER,
    harvest_labels,
    harvest_server_labels,
    labels_from_thread,
)
from lg_eval.labels._models import Label, Source, Split
from lg_eval.labels._pairs import PairedLabel, Pairing, paired_labels
from lg_eval.labels._split import EXAMPLES_FRACTION, label_split
from lg_eval.labels._table import labelled_keys, load_labels, save_labels

__all__ = [
    "ACTION_KEY",
    "EXAMPLES_FRACTION",
    "MAX_EXAMPLES",
    "REVIEWER",
    "REVIEW_KEY",
    "Calibration",
    "Corrections",
    "Disagreement",
    "Label",
    "PairedLabel",
    "Pairing",
    "Source",
    "Split",
    "calibrate",
    "correction_examples",
    "harvest_labels",
    "harvest_server_labels",
    "judge_gate_problems",
    "label_split",
    "labelled_keys",
    "labels_from_thread",
    "load_labels",
    "paired_labels",
    "read_label_file",
    "save_labels",
]
