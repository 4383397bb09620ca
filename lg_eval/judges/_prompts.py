"""Prompt constants of the LLM judges.

Every judge prompt is a ``str.format`` template. Every judge fills, as text,
``{inputs}``, ``{outputs}`` and ``{reference_outputs}`` ("" when absent), and
``{inputs_block}`` and ``{reference_block}``: the same text in a short
explanatory block, or "" when absent, so one template serves calls with and
without inputs or a reference. Placeholders particular to one judge are listed
next to its constant; any other ``{name}`` is taken from the keyword arguments
passed when the evaluator is called. Copy a constant and edit it to customise a
judge, then pass it as ``prompt=``.
"""

from __future__ import annotations

# Also filled: {thread} (the rendered thread; the same text as {outputs}).
GRAPH_TRAJECTORY_ACCURACY_PROMPT = """\
You review the route a LangGraph application took through its graph while it served \
one conversation thread. Decide whether that route was sensible.

<criteria>
A sensible graph trajectory:
- goes from each node to the next for a reason the thread makes visible (the input, \
tool results, a human's answer);
- makes steady progress toward what the user asked for, without detours or loops that \
achieve nothing;
- pauses for a human ("__interrupt__") only when it needs information or approval, and \
then acts on the answer it receives when resumed;
- copes sensibly with errors and with state edits made between turns;
- ends every turn with a result that follows from the steps taken;
- is reasonably economical; it does not have to be the shortest possible route;
- when a reference trajectory is supplied, reaches the same outcome by an equivalent \
route (the exact nodes and order may differ where that changes nothing that matters).
</criteria>

<notation>
Each <turn> is one invocation of the graph, numbered from 1 in the order they ran. \
"__start__" is the entry point where the turn's input arrives. "__interrupt__" marks a \
pause where the graph waited for a human; the next turn resumes it, and <human_resume> \
shows the answer the human gave, when it was recorded. An input of "__resuming__" means \
the turn resumed the thread after a pause. Nodes inside subgraphs are written as their \
full path joined by ":". Tasks listed with the same step number ran in parallel.
</notation>

<thread>
{thread}
</thread>
{reference_block}"""

# {reference_block} of the graph judge when a reference is given.
GRAPH_REFERENCE_BLOCK = """
<reference_thread>
Below is a reference trajectory for the same conversation. Treat it as an example of a \
good route, not as the only acceptable one.
{reference}
</reference_thread>
"""

TRAJECTORY_ACCURACY_PROMPT = """\
You review the trajectory of an AI agent: the messages and tool calls it produced while \
working on a request. Decide whether the trajectory was sensible.

<criteria>
A sensible trajectory:
- takes each step for a reason that follows from what came before;
- makes clear progress toward the user's goal;
- calls tools that fit the task, with arguments that fit the request;
- is reasonably economical; it does not have to be the shortest possible route.
</criteria>

Work out the goal first: read the request (if none is given, infer it from the first \
message) and the final message. Then judge the trajectory by how well it served that goal.
{inputs_block}
<trajectory>
{outputs}
</trajectory>
"""

TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE = """\
You review the trajectory of an AI agent: the messages and tool calls it produced while \
working on a request. Compare it with a reference trajectory and decide whether it was \
sensible.

<criteria>
A sensible trajectory:
- takes each step for a reason that follows from what came before;
- makes clear progress toward the user's goal;
- calls tools that fit the task, with arguments that fit the request;
- is reasonably economical; it does not have to be the shortest possible route;
- does what the reference trajectory does in substance, even where wording, argument \
formatting or the order of independent steps differ.
</criteria>
{inputs_block}
<reference_trajectory>
{reference_outputs}
</reference_trajectory>

<trajectory>
{outputs}
</trajectory>
"""

# Also filled: {dimensions} (the rubric, rendered).
RUBRIC_PROMPT = """\
You grade the trajectory of an AI agent on several separate dimensions of a rubric. \
Grade each dimension on its own scale and on its own merits: a weakness in one \
dimension must not lower the score of another.

<rubric>
{dimensions}
</rubric>
{inputs_block}
<trajectory>
{outputs}
</trajectory>
{reference_block}"""

# The conversation judges (lg_eval.judges._conversation): the rubric prompt for a whole
# conversation thread. Also filled: {dimensions} (the rubric, rendered).
CONVERSATION_RUBRIC_PROMPT = """\
You grade a conversation between a user and an AI agent, read from the agent's thread. \
Each <turn> is one run of the agent: <input> holds what the user said, <human_resume> an \
answer someone gave to a question the agent paused on (the user, or a reviewer approving \
an action), <steps> what the agent did, and <result> what it answered. When <inputs> are \
given they may say who the user was, what they wanted and how they left (last words they \
did not send to the agent). Work out what the user wanted, then grade each dimension of \
the rubric on its own scale.

<rubric>
{dimensions}
</rubric>
{inputs_block}
<conversation>
{outputs}
</conversation>
{reference_block}"""

# The conversation judges' one dimension each: (feedback key, dimension, what it measures,
# what its lowest, middle and highest scores mean on 1-5).
CONVERSATION_DIMENSIONS: dict[str, tuple[str, str, dict[int, str]]] = {
    "goal_completion": (
        "goal_met",
        "How fully the agent got the user what they came for by the end of the conversation.",
        {
            1: "the user's goal was not met at all",
            3: "the goal was partly met, or met in a way the user did not accept",
            5: "the goal was fully met and the user had nothing left to ask",
        },
    ),
    "user_frustration": (
        "calm",
        "How free of frustration the user stays: signs of frustration are repeating "
        "themselves, complaining, impatience, and giving up before their goal is met.",
        {
            1: "the user is exasperated or gives up",
            3: "the user shows some impatience or has to repeat themselves",
            5: "the user shows no frustration at all",
        },
    ),
    "knowledge_retention": (
        "retained",
        "How well the agent keeps what the user told it in earlier turns: it does not ask "
        "again for what it was given, contradict it or forget it when acting.",
        {
            1: "the agent forgets or contradicts what the user said earlier",
            3: "the agent asks again for something it was told once, or uses it only in part",
            5: "the agent uses everything the user said, without asking twice",
        },
    ),
}

# Also filled: {trajectory_a} and {trajectory_b}, the two trajectories in the order
# shown to the model ({outputs} holds both, labelled).
PAIRWISE_TRAJECTORY_PROMPT = """\
You compare two trajectories, A and B, that AI agents produced for the same request, \
and decide which one handled it better.

<criteria>
The better trajectory reaches a correct and useful outcome, takes steps that follow \
sensibly from one another, uses tools and human input appropriately, and wastes less \
effort. Length on its own is neither good nor bad, and the order in which the two are \
shown says nothing about their quality. Answer "tie" only when neither is meaningfully \
better.
</criteria>
{inputs_block}
<trajectory_A>
{trajectory_a}
</trajectory_A>

<trajectory_B>
{trajectory_b}
</trajectory_B>
{reference_block}"""

# The default rubric: dimension name -> what it measures (each scored 1-5).
RUBRIC_DIMENSIONS: dict[str, str] = {
    "reasoning_quality": (
        "How sound the agent's reasoning is: each decision follows from what it knows at "
        "that point, with no unsupported leaps, contradictions or invented facts."
    ),
    "strategy": (
        "How well the overall plan fits the task: the agent picks a sensible approach, "
        "orders its steps well and avoids needless work."
    ),
    "adaptability": (
        "How well the agent reacts to what happens: it revises its plan after surprising "
        "tool results, errors or human answers instead of pressing on regardless."
    ),
    "information_usage": (
        "How well the agent gathers and uses information: it asks for or looks up what it "
        "needs, uses what it obtained, and does not ignore or misread it."
    ),
}
RUBRIC_DIMENSION_SCORE = "Your score for this dimension, an integer from {low} to {high}."
RUBRIC_DIMENSION_REASONING = "Why the trajectory deserves this score on this dimension."
RUBRIC_TOOL_DESCRIPTION = "Record a score, with reasoning, for every rubric dimension."

INPUTS_BLOCK = """
<inputs>
{inputs}
</inputs>
"""

REFERENCE_BLOCK = """
<reference_trajectory>
A reference trajectory for the same request, as an example of a good one:
{reference}
</reference_trajectory>
"""

FEW_SHOT_INTRO = "Graded examples follow; use them to calibrate your judgment."

REASONING_DESCRIPTION = (
    "Your reasoning, written before deciding: what the trajectory did well and badly, "
    "step by step, ending with the score it deserves."
)
BOOLEAN_SCORE_DESCRIPTION = "true if the trajectory meets the criteria, false if it does not."
CONTINUOUS_SCORE_DESCRIPTION = (
    "How well the trajectory meets the criteria, from 0.0 (not at all) to 1.0 (fully)."
)
CHOICE_SCORE_DESCRIPTION = "How well the trajectory meets the criteria; one of the allowed values."
JUDGMENT_TOOL_DESCRIPTION = "Record your judgment. Call this exactly once."
PAIRWISE_WINNER_DESCRIPTION = 'Which trajectory is better: "A", "B", or "tie".'
PAIRWISE_TOOL_DESCRIPTION = "Record which trajectory is better. Call this exactly once."

CORRECTION_MESSAGE = """\
Your previous answer could not be used: {error}
Your previous answer was:
{previous}
Answer again by calling the `{tool}` tool once, with arguments that satisfy its schema."""

JSON_CORRECTION_MESSAGE = """\
Your previous answer could not be used: {error}
Your previous answer was:
{previous}
Answer again with one JSON object that satisfies the response format's schema."""

TEXT_MODE_INSTRUCTIONS = """\
Reply with a single JSON object and nothing else. It must satisfy this JSON schema:
{schema}"""

SUMMARY_NOTE = (
    "[Summarized to fit a {budget}-character budget ({original} characters in full): {actions}.]"
)
