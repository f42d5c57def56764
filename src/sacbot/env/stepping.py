"""One environment step's hot path as a plain function: the agent's and the opponent's intents, one engine
turn, the agent's next tick, observation and reward.

`TankRoyaleEnv.step` and `VecTankRoyaleEnv` call it; it is compiled with the engine (`sacbot.compiled`), so a
vector step loops over its arenas without going through the Gymnasium classes' Python layer for the work.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from sacbot.agent.features import RadarMode, RoundMemory, action_to_intent, reward, stored_observation
from sacbot.engine.game import Game
from sacbot.env.ticks import TickView, tick_view
from sacbot.opponents.base import ClassicBot
from sacbot.protocol import TickEventForBot


def advance(
    game: Game,
    opponent: ClassicBot,
    memory: RoundMemory,
    me: int,
    them: int,
    values: list[float],
    radar_mode: RadarMode,
    out: np.ndarray | None = None,
    waves: bool = False,
    threats: bool = False,
    bullets: bool = False,
) -> tuple[np.ndarray, TickView, float]:
    """Play one turn from the agent's action `values` (four floats): its observation (with `waves`,
    `threats` and `bullets`, the wave, threat and critics' bullet inputs after it:
    `features.stored_observation`; written into `out` when given), the agent's new tick view and the reward
    of that tick."""
    intents: dict[int, Any] = {me: action_to_intent(values, radar_mode, memory)}
    if game.bot(them).alive:  # always, in a 1v1: its death ends the round
        # The view is duck-typed as the TickEventForBot the opponent reads (tests/env/test_env_ticks.py).
        intents[them] = opponent.on_tick(cast(TickEventForBot, tick_view(game, them)))
    game.turn(intents)
    tick = tick_view(game, me)
    obs = stored_observation(tick, memory, waves, threats, bullets, out)
    return obs, tick, reward(tick, memory)
