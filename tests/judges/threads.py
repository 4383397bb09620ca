"""Hand-built trajectories for judge tests (no graph run needed)."""

from __future__ import annotations

from lg_eval._trajectory import (
    InterruptRecord,
    StateEdit,
    Superstep,
    TaskRun,
    ThreadTrajectory,
    Turn,
)

QUESTION = {"messages": [{"role": "user", "content": "what's the weather in sf?"}]}
ANSWER = {"messages": [{"role": "assistant", "content": "The weather in sf is sunny and 75."}]}
ASK = InterruptRecord(id="int-1", value="Tell me the weather for sf", path="tools")


def weather_thread() -> ThreadTrajectory:
    """The agentevals weather scenario: the tool asks a human, the resume answers."""
    return ThreadTrajectory(
        thread_id="weather-1",
        turns=[
            Turn(
                index=0,
                kind="input",
                input=QUESTION,
                supersteps=[
                    Superstep(step=-1, tasks=[TaskRun(name="__start__", path="__start__")]),
                    Superstep(step=0, tasks=[TaskRun(name="agent", path="agent")]),
                    Superstep(
                        step=1, tasks=[TaskRun(name="tools", path="tools", interrupts=[ASK])]
                    ),
                ],
                status="interrupted",
                interrupts=[ASK],
                result={},
            ),
            Turn(
                index=1,
                kind="resume",
                resume={"int-1": "It's sunny and 75 degrees"},
                resume_by_node={"tools": "It's sunny and 75 degrees"},
                supersteps=[
                    Superstep(step=2, tasks=[TaskRun(name="tools", path="tools", resumed=True)]),
                    Superstep(step=3, tasks=[TaskRun(name="agent", path="agent")]),
                ],
                status="completed",
                result=ANSWER,
            ),
        ],
    )


WEATHER_THREAD_TEXT = """\
<turn number="1" kind="input" status="interrupted">
<input>
{"messages": [{"role": "user", "content": "what's the weather in sf?"}]}
</input>
<steps>
step -1: __start__
step 0: agent
step 1: tools
  __interrupt__ (id int-1): Tell me the weather for sf
</steps>
</turn>

<turn number="2" kind="resume" status="completed">
<human_resume>
tools (interrupt int-1): It's sunny and 75 degrees
</human_resume>
<steps>
step 2: tools (resumed)
step 3: agent
</steps>
<result>
{"messages": [{"role": "assistant", "content": "The weather in sf is sunny and 75."}]}
</result>
</turn>"""


def research_thread() -> ThreadTrajectory:
    """Subgraph tasks, parallel tasks, a state edit, a task error, a static breakpoint."""
    return ThreadTrajectory(
        thread_id="research-1",
        turns=[
            Turn(
                index=0,
                kind="input",
                input={"topic": "tides"},
                supersteps=[
                    Superstep(step=-1, tasks=[TaskRun(name="__start__", path="__start__")]),
                    Superstep(
                        step=0,
                        tasks=[
                            TaskRun(
                                name="research",
                                path="research",
                                subgraph=[
                                    Superstep(
                                        step=1,
                                        tasks=[TaskRun(name="search", path="research:search")],
                                    ),
                                    Superstep(
                                        step=2,
                                        tasks=[
                                            TaskRun(
                                                name="fetch",
                                                path="research:fetch",
                                                error="TimeoutError('slow site')",
                                            )
                                        ],
                                    ),
                                ],
                            ),
                            TaskRun(name="outline", path="outline"),
                        ],
                    ),
                ],
                status="interrupted",
                breakpoint=True,
                next_nodes=["publish"],
                result={},
            ),
            Turn(
                index=1,
                kind="continue",
                edits=[StateEdit(checkpoint_id="c9", as_node="outline", values={"approved": True})],
                supersteps=[Superstep(step=1, tasks=[TaskRun(name="publish", path="publish")])],
                status="completed",
                result={"report": "Tides follow the moon."},
            ),
        ],
    )


RESEARCH_THREAD_TEXT = """\
<turn number="1" kind="input" status="interrupted">
<input>
{"topic": "tides"}
</input>
<steps>
step -1: __start__
step 0: research
  step 1: research:search
  step 2: research:fetch
    error: TimeoutError('slow site')
step 0: outline
__interrupt__ before publish (static breakpoint)
</steps>
</turn>

<turn number="2" kind="continue" status="completed">
<state_edits>
as outline: {"approved": true}
</state_edits>
<steps>
step 1: publish
</steps>
<result>
{"report": "Tides follow the moon."}
</result>
</turn>"""


def looping_thread(loops: int, tool_output: str = "ok") -> ThreadTrajectory:
    """One turn where agent and tools alternate ``loops`` times, then agent answers."""
    steps = [Superstep(step=-1, tasks=[TaskRun(name="__start__", path="__start__")])]
    for n in range(loops):
        steps.append(Superstep(step=2 * n, tasks=[TaskRun(name="agent", path="agent")]))
        steps.append(Superstep(step=2 * n + 1, tasks=[TaskRun(name="tools", path="tools")]))
    steps.append(Superstep(step=2 * loops, tasks=[TaskRun(name="agent", path="agent")]))
    return ThreadTrajectory(
        thread_id="loop-1",
        turns=[
            Turn(
                index=0,
                kind="input",
                input={"question": "q"},
                supersteps=steps,
                status="completed",
                result={"answer": tool_output},
            )
        ],
    )
