"""Computed answers for the golden datasets' ``resume_fn`` turns.

A ``resume_fn`` is called with the pending interrupts (objects with ``id``,
``path`` and ``value``) and returns one value for all of them or an
``{interrupt id: value}`` map. These answer conditionally, the way a reviewer
following a policy would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lg_eval.play import PendingInterrupt

WEATHER_REPORTS = {"sf": "It's sunny and 75 degrees", "nyc": "Rainy, 50 degrees"}
BUDGET_LIMIT_EUR = 4000


def weather_report(pending: Sequence[PendingInterrupt]) -> str:
    """Answer the weather tool's question from a table of reports, by city."""
    question = str(pending[0].value)  # "Tell me the weather for <city>"
    city = question.rsplit(" ", 1)[-1]
    return WEATHER_REPORTS.get(city, "No report for that city.")


def approve_personal_emails(pending: Sequence[PendingInterrupt]) -> dict[str, Any]:
    """Approve a HITL agent's ``send_email`` to one person; reject mass emails."""
    answers: dict[str, Any] = {}
    for ask in pending:
        decisions = []
        for request in ask.value["action_requests"]:
            if request["name"] == "send_email" and request["args"]["to"].startswith("all@"):
                decisions.append({"type": "reject", "message": "Do not email the whole company."})
            else:
                decisions.append({"type": "approve"})
        answers[ask.id] = {"decisions": decisions}
    return answers


def review_by_policy(pending: Sequence[PendingInterrupt]) -> dict[str, Any]:
    """Legal approves every draft; finance rejects drafts over the budget limit."""
    answers: dict[str, Any] = {}
    for ask in pending:
        if ask.value["reviewer"] == "finance":
            total = ask.value["draft"].split("total")[-1]  # "..., total 4,500 EUR."
            amount = int("".join(ch for ch in total if ch.isdigit()))
            within = amount <= BUDGET_LIMIT_EUR
            comment = "Within budget." if within else f"Over the {BUDGET_LIMIT_EUR} EUR limit."
            answers[ask.id] = {"approved": within, "comment": comment}
        else:
            answers[ask.id] = {"approved": True, "comment": "No legal concerns."}
    return answers
