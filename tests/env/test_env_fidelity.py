"""Fidelity: a round in the Gymnasium environment equals the same round played over WebSocket on the arena.

The same engine seed, bot ids and actions: the agent side over WebSocket is a policy that runs exactly the
feature, action and reward code `sacbot play` runs (`sacbot.agent.features`) on the ticks it receives, with
the opponent (SpinBot; Corners, whose corner comes from its seed) as a real client beside it. Every
observation, raw bot state and reward must be identical.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from sacbot.agent.features import RoundMemory, action_to_intent, observe, reward, round_end_reward
from sacbot.arena.controller import play_game_async
from sacbot.arena.server import EmbeddedArena
from sacbot.client import BotIdentity, play
from sacbot.engine import game_setup_for
from sacbot.env import TankRoyaleEnv
from sacbot.opponents import make_opponent
from sacbot.protocol import BotIntent, GameStartedEventForBot, TickEventForBot

SEED = 21
STATE_FIELDS = ("x", "y", "direction", "gun_direction", "radar_direction", "speed", "energy", "gun_heat")


class ScriptedAgent:
    """A `BotPolicy` playing a fixed action sequence through the learner's features, recording what it saw."""

    name = "SacBot"

    def __init__(self, actions: np.ndarray) -> None:
        self.actions = actions
        self.memory: RoundMemory | None = None
        self.my_id = 0
        self.observations: list[np.ndarray] = []
        self.rewards: list[float] = []
        self.states: list[tuple[float, ...]] = []

    def on_game_started(self, event: GameStartedEventForBot) -> None:
        self.my_id = event.my_id
        setup = event.game_setup
        self.memory = RoundMemory(float(setup.arena_width), float(setup.arena_height), event.my_id)

    def on_round_started(self, event: Any) -> None:
        assert self.memory is not None
        self.memory.new_round()

    def on_tick(self, tick: TickEventForBot) -> BotIntent:
        memory = self.memory
        assert memory is not None
        k = len(self.observations)
        self.observations.append(observe(tick, memory))
        r = reward(tick, memory)
        if k:  # the reward on tick k+1 answers the action sent on tick k, as a Gymnasium step returns it
            self.rewards.append(r)
        self.states.append(tuple(getattr(tick.bot_state, f) for f in STATE_FIELDS))
        return action_to_intent(self.actions[k], "spin", memory)

    def on_round_ended(self, event: Any) -> None:
        assert self.memory is not None
        self.rewards[-1] += round_end_reward(self.memory)

    def on_game_ended(self, event: Any) -> None:
        pass


def play_on_arena(actions: np.ndarray, opponent: str) -> tuple[ScriptedAgent, int]:
    setup = game_setup_for("1v1", number_of_rounds=1, turn_timeout=10_000_000, ready_timeout=10_000_000)
    agent = ScriptedAgent(actions)
    them = make_opponent(opponent, seed=SEED)

    async def game(url: str) -> int:
        bots = [
            asyncio.create_task(play(agent, BotIdentity("SacBot", "1.0.0", ["sacbot"]), url, "bots")),
            asyncio.create_task(play(them, BotIdentity(opponent, "1.0.0", ["sacbot"]), url, "bots")),
        ]
        await play_game_async(url, setup, ["SacBot", opponent], secret="ctl", connect_timeout=30)
        outcomes = await asyncio.gather(*bots)
        assert all(o.stats.skipped_turns == 0 for o in outcomes)
        return them.my_id

    with EmbeddedArena(bot_secrets={"bots"}, controller_secrets={"ctl"}, seed=SEED) as arena:
        opponent_id = asyncio.run(game(arena.url))
    return agent, opponent_id


@pytest.mark.parametrize("opponent", ["SpinBot", "Corners"])
def test_env_round_equals_the_arena_round(opponent: str) -> None:
    actions = np.random.default_rng(5).uniform(-1, 1, (20_000, 4)).astype(np.float32)
    agent, opponent_id = play_on_arena(actions, opponent)
    assert len(agent.observations) > 30  # a real round, with shots fired on both sides

    env = TankRoyaleEnv(opponent, rounds_per_game=1, agent_id=agent.my_id, opponent_id=opponent_id)
    obs, _ = env.reset(seed=SEED)
    observations, rewards, states = [obs], [], []
    assert env.game is not None
    bot = env.game.bot(agent.my_id)
    states.append(tuple(getattr(bot, f) for f in STATE_FIELDS))
    for action in actions:
        obs, r, terminated, truncated, info = env.step(action)
        observations.append(obs)
        rewards.append(r)
        states.append(tuple(getattr(bot, f) for f in STATE_FIELDS))
        if terminated or truncated:
            break
    assert terminated
    assert len(observations) == len(agent.observations)
    for k, (ours, theirs) in enumerate(zip(observations, agent.observations, strict=True)):
        assert np.array_equal(ours, theirs), f"observation {k} differs"
    assert states == agent.states
    assert rewards == agent.rewards
    assert any(r != 0.0 for r in rewards)
