"""Gymnasium environments over the engine: fast in-process training against the classic opponents.

    import gymnasium, sacbot.env
    env = gymnasium.make("sacbot/TankRoyale-v0", opponent="SpinBot")
    vec = sacbot.env.VecTankRoyaleEnv(16, opponents="SpinBot,Walls")

Importing this package registers "sacbot/TankRoyale-v0": `TankRoyaleEnv` for `gymnasium.make`, and
`VecTankRoyaleEnv` for `gymnasium.make_vec(ENV_ID, num_envs=N, vectorization_mode="vector_entry_point")`.
"""

from __future__ import annotations

import gymnasium as gym

from sacbot.env.arena_env import TankRoyaleEnv, parse_opponents
from sacbot.env.vector import VecTankRoyaleEnv

ENV_ID = "sacbot/TankRoyale-v0"


def register() -> None:
    """Register the id (idempotent; importing this package already did)."""
    if ENV_ID not in gym.registry:
        gym.register(
            id=ENV_ID,
            entry_point="sacbot.env.arena_env:TankRoyaleEnv",
            vector_entry_point="sacbot.env.vector:VecTankRoyaleEnv",
        )


register()

__all__ = ["ENV_ID", "TankRoyaleEnv", "VecTankRoyaleEnv", "parse_opponents", "register"]
