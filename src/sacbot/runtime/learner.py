"""The runtime's view of `sacbot.agent`: the SAC trainer as a `Learner`, the features as a `Features` object.

Only this module knows the agent's API; the threads, channel and saver see the small interfaces in ports.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sacbot.agent.features import (
    RadarMode,
    RoundMemory,
    action_to_intent,
    reward,
    round_end_reward,
    shaping_problem,
    stored_observation,
)
from sacbot.agent.inference import FastActor, behaviour_sizes
from sacbot.agent.networks import NetworkSizes
from sacbot.agent.trainer import SacTrainer
from sacbot.errors import UserError
from sacbot.runtime.debug_paint import paint
from sacbot.runtime.ports import TickActor
from sacbot.runtime.records import Transition


def make_fast_actor(arrays: Mapping[str, np.ndarray], sizes: NetworkSizes) -> TickActor:
    """A fast (numpy, no autograd) actor on published actor arrays."""
    return FastActor(arrays, sizes)


class AgentLearner:
    """`SacTrainer` (networks, optimisers, sequence replay) behind the runtime's `Learner` interface."""

    def __init__(self, trainer: SacTrainer, behaviour_log_std_min: float | None = None) -> None:
        self.trainer = trainer
        # The actors it publishes for play draw with at least this log std (`inference.behaviour_sizes`).
        self.play_sizes = behaviour_sizes(trainer.config.sizes, behaviour_log_std_min)
        self.rounds_completed = 0  # rounds closed in the replay by this process (the warm-up counts these)

    @property
    def env_steps(self) -> int:
        return self.trainer.env_steps

    @property
    def updates(self) -> int:
        return self.trainer.updates

    def add(self, transition: Transition) -> None:
        self.trainer.record(*transition)
        if transition.done:
            self.rounds_completed += 1

    def cut_episode(self) -> None:
        self.trainer.replay.end_round()

    def rounds_stored(self) -> int:
        return self.rounds_completed

    def replay_size(self) -> int:
        return len(self.trainer.replay)

    def update(self) -> dict[str, float]:
        return self.trainer.train_step() or {}

    def fast_actor(self) -> TickActor:
        return make_fast_actor(self.trainer.snapshot.arrays, self.play_sizes)

    def state_arrays(self) -> dict[str, np.ndarray]:
        return self.trainer.state_arrays()

    def network_sizes(self) -> dict[str, Any]:
        return self.trainer.network_sizes()

    def export_replay(self, max_steps: int) -> dict[str, np.ndarray]:
        return self.trainer.replay.export_rounds(max_steps)

    def load_replay(self, arrays: dict[str, np.ndarray]) -> int:
        """Put a kept replay's rounds into the replay (start-up, before the trainer thread runs)."""
        return self.trainer.replay.extend_rounds(arrays)


class AgentFeatures:
    """The agent's feature functions with their per-round memory, for the realtime policy: what the
    networks of `sizes` read and how their gun entry acts. `training` off (an eval) leaves out the critics'
    own inputs, which only a stored training transition needs."""

    def __init__(
        self,
        radar_mode: RadarMode,
        sizes: NetworkSizes = NetworkSizes(),
        aim_shaping: float = 0.0,
        close_shaping: float = 0.0,
        training: bool = True,
        surf_shaping: float = 0.0,
    ) -> None:
        self.radar_mode: RadarMode = radar_mode
        problem = shaping_problem(aim_shaping, close_shaping, surf_shaping, sizes.threat_inputs)
        if problem is not None:
            raise UserError(problem, exit_code=2)
        # Observations then carry the wave and threat inputs after the state (`NetworkSizes.wave_inputs`,
        # `.threat_inputs`), then the critics' own inputs (`NetworkSizes.bullet_inputs`).
        self.wave_inputs, self.threat_inputs = sizes.wave_inputs, sizes.threat_inputs
        # How many leading entries of an observation the actor reads (the state, the wave and threat inputs):
        # worked out once, read every tick.
        self.observed_dim = sizes.observed_dim
        self.bullet_inputs = sizes.bullet_inputs and training
        self.memory = RoundMemory.for_sizes(
            sizes, aim_shaping=aim_shaping, close_shaping=close_shaping, surf_shaping=surf_shaping
        )

    def start_game(self, arena_width: float, arena_height: float, my_id: int) -> None:
        self.memory.start_game(arena_width, arena_height, my_id)

    def start_round(self) -> None:
        self.memory.new_round()

    def observe(self, tick: Any) -> np.ndarray:
        """The stored observation: the state, the wave and threat inputs that are on
        (`NetworkSizes.observed_dim` entries, what the actor reads), then the critics' bullet inputs when on.
        A fresh array per tick: transitions keep it."""
        return stored_observation(tick, self.memory, self.wave_inputs, self.threat_inputs, self.bullet_inputs)

    def reward(self, tick: Any) -> float:
        return reward(tick, self.memory)

    def round_end_reward(self) -> float:
        return round_end_reward(self.memory)

    def to_intent(self, action: np.ndarray) -> Any:
        return action_to_intent(action, self.radar_mode, self.memory)

    def paint(self, tick: Any, action: np.ndarray) -> str:
        return paint(self.memory, tick.bot_state, action.tolist())
