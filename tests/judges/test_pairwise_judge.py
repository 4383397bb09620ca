"""The pairwise judge: the better of two trajectories, with the A/B order randomized."""

from __future__ import annotations

import pytest

from lg_eval.errors import TrajectoryFormatError
from lg_eval.judges import create_pairwise_trajectory_judge
from tests.judges.fake_judge import ScriptedJudge, verdict

SHORT = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "SHORT"}]
LONG = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "LONG"}]


def always(winner: str, **options):
    model = ScriptedJudge.of(verdict(reasoning="Because.", winner=winner), repeat_last=True)
    return model, create_pairwise_trajectory_judge(judge=model, **options)


def shown_first(call) -> str:
    """Which trajectory the model saw as A."""
    prompt = call.prompt
    block = prompt[prompt.index("<trajectory_A>") : prompt.index("</trajectory_A>")]
    return "SHORT" if "SHORT" in block else "LONG"


def test_fixed_order_shows_the_first_as_a_and_maps_the_winner():
    model, judge = always("A", order="fixed")
    result = judge(outputs=[SHORT, LONG])
    assert (result["key"], result["score"]) == ("pairwise_trajectory_preference", 1.0)
    assert result["metadata"]["winner"] == "first"
    assert result["metadata"]["scores"] == [1.0, 0.0]
    assert result["metadata"]["orders"] == ["first-second"]
    assert result["comment"] == "(A was the first trajectory, B the second.) Because."
    assert shown_first(model.calls[0]) == "SHORT"


def test_random_order_is_mapped_back_to_the_caller_order():
    model, judge = always("A", seed=7)
    winners = [judge(outputs=[SHORT, LONG])["metadata"]["winner"] for _ in range(12)]
    seen_as_a = [shown_first(call) for call in model.calls]
    assert set(seen_as_a) == {"SHORT", "LONG"}  # both orders were used
    assert winners == ["first" if a == "SHORT" else "second" for a in seen_as_a]


def test_same_seed_gives_the_same_orders():
    orders = []
    for _ in range(2):
        _, judge = always("tie", seed=3)
        orders.append([judge(outputs=[SHORT, LONG])["metadata"]["orders"][0] for _ in range(6)])
    assert orders[0] == orders[1]


def test_two_samples_show_both_orders_so_pure_position_bias_is_a_tie():
    model, judge = always("A", samples=2, seed=1)
    result = judge(outputs=[SHORT, LONG])
    assert sorted(result["metadata"]["orders"]) == ["first-second", "second-first"]
    assert {shown_first(c) for c in model.calls} == {"SHORT", "LONG"}
    assert (result["score"], result["metadata"]["winner"]) == (0.5, "tie")


def test_a_consistent_preference_survives_order_swapping():
    def prefer_long(messages):
        prompt = messages[-1].content
        a_block = prompt[prompt.index("<trajectory_A>") : prompt.index("</trajectory_A>")]
        return verdict(reasoning="Long is better.", winner="A" if "LONG" in a_block else "B")

    model = ScriptedJudge.of(prefer_long, repeat_last=True)
    judge = create_pairwise_trajectory_judge(judge=model, samples=4, seed=0)
    result = judge(outputs=[SHORT, LONG])
    assert (result["score"], result["metadata"]["winner"]) == (0.0, "second")
    assert result["metadata"]["needs_review"] is False


def test_tie_scores_one_half():
    _, judge = always("tie")
    result = judge(outputs=[SHORT, LONG])
    assert (result["score"], result["metadata"]["winner"]) == (0.5, "tie")


def test_outputs_must_be_a_pair():
    _, judge = always("A")
    with pytest.raises(TrajectoryFormatError, match=r"pass outputs=\[first, second\]"):
        judge(outputs=SHORT + LONG)


async def test_async_pairwise_judge():
    model = ScriptedJudge.of(verdict(reasoning="B wins.", winner="B"))
    judge = create_pairwise_trajectory_judge(judge=model, order="fixed").as_async()
    result = await judge(outputs=[SHORT, LONG], inputs={"question": "hi"})
    assert result["metadata"]["winner"] == "second"
    assert '<inputs>\n{"question": "hi"}\n</inputs>' in model.calls[0].prompt
