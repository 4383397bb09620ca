"""The turn player: play a thread's turns on a graph, on a checkpointer named by URL.

:func:`play_thread` / :func:`aplay_thread` are the one turn loop of lg_eval: they play
one thread turn by turn and return a :class:`PlayedCase`, taking the human's side from
an :class:`AnswerSource`: a dataset case's scripted turns (:class:`Script`), or a
recording of answers per asking node and inputs (:class:`Recording`, played by
:class:`FromRecording`, as :mod:`lg_eval.replay` does), which reuses an answer only for
the same question (:func:`same_question`); either may hand questions to a simulated
reviewer (:class:`SimulatedReviewer`). A case with ``user:`` goes on after its scripted
turns with a simulated user (:class:`SimulatedUser`, a chat model with a persona and a
goal), whose turns the same loop plays; each turn records who wrote it (:data:`Speaker`)
and the case why its conversation ended (:class:`ConversationEnd`). :func:`play_case` /
:func:`aplay_case` play a :class:`~lg_eval.datasets.Case` (experiments, the LangSmith
target, the pytest fixture and the server target call them). :func:`resume_value` is the
one rule for what ``Command(resume=...)`` carries. :func:`resolve_target` turns a ``"module:attr"``
reference, a compiled graph, a builder or a factory into a graph bound to a
checkpointer; :func:`open_checkpointer` / :func:`aopen_checkpointer` open the
checkpointer a URL names (``sqlite:///...``, ``postgresql://...``, ``memory://``, or
the default ``.lg_eval/checkpoints.sqlite``).
"""

from lg_eval.play._answers import (
    AnswerSource,
    Move,
    ThreadState,
    answers_by_id,
    describe_asks,
    pending_interrupts,
    resume_value,
    thread_config,
)
from lg_eval.play._checkpointers import (
    Storage,
    aopen_checkpointer,
    import_reference,
    open_checkpointer,
    resolve_target,
    storage_of,
)
from lg_eval.play._models import (
    ConversationEnd,
    Graph,
    PendingInterrupt,
    PlayedCase,
    PlayedTurn,
    QuestionChange,
    Saver,
    Speaker,
    SpeakerUsage,
    StopReason,
)
from lg_eval.play._player import (
    aplay_case,
    aplay_thread,
    play_case,
    play_thread,
    play_thread_core,
    playing,
)
from lg_eval.play._questions import (
    describe_changes,
    describe_question,
    question_key,
    same_question,
)
from lg_eval.play._recording import (
    MAX_CALLS,
    FromRecording,
    OnNewQuestion,
    Opening,
    RecordedAnswer,
    Recording,
)
from lg_eval.play._script import Script, ScriptOptions
from lg_eval.play._simulated import (
    Reviewer,
    ReviewerError,
    Said,
    SimulatedReviewer,
    SimulatedUser,
    UserTurn,
)

__all__ = [
    "MAX_CALLS",
    "AnswerSource",
    "ConversationEnd",
    "FromRecording",
    "Graph",
    "Move",
    "OnNewQuestion",
    "Opening",
    "PendingInterrupt",
    "PlayedCase",
    "PlayedTurn",
    "QuestionChange",
    "RecordedAnswer",
    "Recording",
    "Reviewer",
    "ReviewerError",
    "Said",
    "Saver",
    "Script",
    "ScriptOptions",
    "SimulatedReviewer",
    "SimulatedUser",
    "Speaker",
    "SpeakerUsage",
    "StopReason",
    "Storage",
    "ThreadState",
    "UserTurn",
    "answers_by_id",
    "aopen_checkpointer",
    "aplay_case",
    "aplay_thread",
    "describe_asks",
    "describe_changes",
    "describe_question",
    "import_reference",
    "open_checkpointer",
    "pending_interrupts",
    "play_case",
    "play_thread",
    "play_thread_core",
    "playing",
    "question_key",
    "resolve_target",
    "resume_value",
    "same_question",
    "storage_of",
    "thread_config",
]
