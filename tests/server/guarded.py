"""What the sweep tests' server serves: a tiny graph behind an API key.

``auth`` is a real LangGraph custom auth handler (``langgraph.json``'s ``"auth"``): a
request whose ``x-api-key`` header is not ``$LG_EVAL_TEST_SERVER_KEY`` is answered 401.
``graph`` is one cheap node per turn, so hundreds of threads take seconds.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph_sdk import Auth

KEY_ENV = "LG_EVAL_TEST_SERVER_KEY"
KEY = "lsv2-sk-test-7f3a9c1e2b4d"
"""The key the tests' guarded server is started with (a fake, shaped like a LangSmith key)."""

auth = Auth()


@auth.authenticate
async def authenticate(headers: dict[bytes, bytes]) -> str:
    """The caller is ``tester`` when it sends the key, as ``x-api-key`` (what the SDK's
    ``api_key`` sends) or as ``Authorization: Bearer``; anything else is a 401."""
    sent = headers.get(b"x-api-key", b"").decode()
    bearer = headers.get(b"authorization", b"").decode()
    if not sent and bearer.startswith("Bearer "):
        sent = bearer.removeprefix("Bearer ")
    if not sent or sent != os.environ.get(KEY_ENV):
        raise Auth.exceptions.HTTPException(status_code=401, detail="Invalid API key")
    return "tester"


def _reply(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f"echo {len(state['messages'])}")]}


def _build() -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("reply", _reply)
    builder.add_edge(START, "reply")
    return builder.compile(name="echo")


graph = _build()
