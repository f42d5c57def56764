"""The realtime policy in the engine's in-process battle (no sockets): transitions, reports, hidden reset."""

from __future__ import annotations

import numpy as np
import pytest

from sacbot.agent.exploration import ColouredNoise
from sacbot.agent.networks import NetworkSizes
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.engine import game_setup_for
from sacbot.opponents import make_opponent
from sacbot.opponents.local import LocalBattle
from sacbot.runtime.channel import DropOldestChannel
from sacbot.runtime.learner import AgentFeatures, AgentLearner, make_fast_actor
from sacbot.runtime.policy import RealtimePolicy
from sacbot.runtime.records import EPISODE_CUT, ChannelItem, RoundReport, Transition


def test_rounds_of_transitions_and_reports() -> None:
    sac = SacTrainer(TrainerConfig(seed=3, replay_capacity=1000, device="cpu"))
    actor = make_fast_actor(sac.snapshot.arrays, NetworkSizes())
    channel: DropOldestChannel[ChannelItem] = DropOldestChannel(100_000)
    reports: list[RoundReport] = []
    policy = RealtimePolicy(AgentFeatures("spin"), lambda: actor, channel, reports.append, actions="sampled")
    hidden_at_round_start: list[bool] = []
    original = policy.on_round_started

    def on_round_started(event: object) -> None:
        original(event)
        hidden_at_round_start.append(not policy.hidden.any())

    policy.on_round_started = on_round_started  # type: ignore[method-assign]
    setup = game_setup_for("1v1", number_of_rounds=2)
    battle = LocalBattle(setup, {1: policy, 2: make_opponent("TrackFire", seed=1)}, seed=5)
    battle.play(max_turns_per_round=3000)

    assert [r.round for r in reports] == [1, 2]
    assert hidden_at_round_start == [True, True]
    items = channel.drain()
    transitions = [t for t in items if isinstance(t, Transition)]
    assert len(transitions) == len(items)  # a game played to its end sends no EpisodeCut
    dones = [i for i, t in enumerate(transitions) if t.done]
    assert len(dones) == 2 and dones[-1] == len(transitions) - 1  # exactly one terminal step per round
    # Each round of T ticks gives T - 1 transitions (the last tick's action has no consequence).
    assert len(transitions) == sum(r.turns - 1 for r in reports)
    first = transitions[0]
    assert first.obs.shape == (17,) and first.action.shape == (4,) and first.hidden.shape == (128,)
    assert not first.hidden.any()  # the first step acted from the reset hidden state
    assert np.all(np.abs(np.stack([t.action for t in transitions])) <= 1.0)
    for r in reports:
        assert r.turns > 0 and 0 <= r.p50_ms <= r.p99_ms <= r.max_ms
        assert r.outcome in ("won", "lost", "survived") and r.own_score >= 0 and r.enemy_score >= 0
    assert sum(r.reward_sum for r in reports) == pytest.approx(sum(t.reward for t in transitions))
    assert policy.game_over


def test_eval_mode_is_deterministic_and_feeds_nothing() -> None:
    sac = SacTrainer(TrainerConfig(seed=4, replay_capacity=1000, device="cpu"))
    actor = make_fast_actor(sac.snapshot.arrays, NetworkSizes())

    def play() -> list[RoundReport]:
        reports: list[RoundReport] = []
        policy = RealtimePolicy(AgentFeatures("spin"), lambda: actor, None, reports.append, actions="mean")
        setup = game_setup_for("1v1", number_of_rounds=1)
        LocalBattle(setup, {1: policy, 2: make_opponent("Target", seed=1)}, seed=9).play(
            max_turns_per_round=300
        )
        return reports

    a, b = play(), play()
    assert [(r.turns, r.reward_sum, r.own_score) for r in a] == [
        (r.turns, r.reward_sum, r.own_score) for r in b
    ]


def test_an_aborted_round_is_cut_not_terminal() -> None:
    sac = SacTrainer(TrainerConfig(seed=5, replay_capacity=1000, device="cpu"))
    actor = make_fast_actor(sac.snapshot.arrays, NetworkSizes())
    channel: DropOldestChannel[ChannelItem] = DropOldestChannel(100_000)
    policy = RealtimePolicy(AgentFeatures("spin"), lambda: actor, channel, None, "sampled")
    setup = game_setup_for("1v1", number_of_rounds=3)
    battle = LocalBattle(setup, {1: policy, 2: make_opponent("Target", seed=1)}, seed=2)
    assert battle.play_round(on_turn=lambda game: game.turn_number >= 40) is False  # cut short: no RoundEnded
    policy.on_game_aborted()
    items = channel.drain()
    assert items[-1] is EPISODE_CUT and len(items) == policy.turns  # T - 1 finished steps, then the cut
    assert not any(isinstance(t, Transition) and t.done for t in items)
    learner = AgentLearner(sac)
    for item in items:
        learner.cut_episode() if item is EPISODE_CUT else learner.add(item)  # type: ignore[arg-type]
    assert sac.replay.rounds == 1 and learner.rounds_stored() == 0  # stored, but not a completed round


def test_training_play_draws_from_the_coloured_noise_and_evals_ignore_it() -> None:
    sac = SacTrainer(TrainerConfig(seed=6, replay_capacity=1000, device="cpu"))
    actor = make_fast_actor(sac.snapshot.arrays, NetworkSizes())
    channel: DropOldestChannel[ChannelItem] = DropOldestChannel(100_000)
    noise = ColouredNoise(1.0, 1, 4, seed=11)
    policy = RealtimePolicy(AgentFeatures("spin"), lambda: actor, channel, None, "sampled", noise=noise)
    setup = game_setup_for("1v1", number_of_rounds=1)
    LocalBattle(setup, {1: policy, 2: make_opponent("Target", seed=1)}, seed=3).play(max_turns_per_round=200)
    transitions = [t for t in channel.drain() if isinstance(t, Transition)]
    assert len(transitions) > 100
    same = ColouredNoise(1.0, 1, 4, seed=11)
    same.restart(0)  # the round's start restarts the stream
    for t in transitions:  # each action is tanh(mu + std * eps) with the stream's next draw as eps
        expected, _ = actor.step(t.obs, t.hidden, False, None, same.draw()[0])
        np.testing.assert_allclose(t.action, expected, atol=1e-6)
    assert RealtimePolicy(AgentFeatures("spin"), lambda: actor, None, None, "mean", noise=noise).noise is None
