"""Example LangGraph graphs driven by scripted chat models, for offline evaluation.

Each module exposes ``build(checkpointer=None, model=None, ...)`` returning a
compiled graph and ``default_model()`` returning a fresh `ScriptedChatModel`
(used when ``model`` is None). Pass a real chat model to run the same graph live.

* `graphs.weather` - ReAct agent whose tool interrupts for a human answer.
* `graphs.research` - nested subgraphs with interrupts at two depths.
* `graphs.approval` - parallel interrupts resumed by id; a node that interrupts twice.
* `graphs.map_reduce` - `Send` fan-out and a reducer join.
* `graphs.hitl_agent` - `create_agent` with `HumanInTheLoopMiddleware`.
* `graphs.breakpoint` - static ``interrupt_before`` breakpoint.
* `graphs.functional` - Functional API (`entrypoint` / `task`) with an interrupt.
* `graphs.flaky` - a node error and a retry with ``invoke(None)``.
* `graphs.command_goto` - routing with ``Command(goto=..., update=...)``.
* `graphs.counter` - two nodes and no model, the smallest case (benchmarks).

`graphs.scenarios` holds the scripted human-in-the-loop conversation for each.
"""
