"""The classic opponents: the ten Tank Royale sample behaviours, written as per-tick policies.

Each is a `ClassicBot` (the `BotPolicy` contract: `on_tick(TickEventForBot) -> BotIntent` plus the lifecycle
hooks), so the same object plays over WebSocket (`sacbot opponent NAME`, `bots/<Name>/`) and inside the engine
(`sacbot.env`). `make_opponent("SpinBot", seed=1)` builds one; `OPPONENT_NAMES` lists them.
"""

from __future__ import annotations

import importlib

from sacbot.errors import UserError
from sacbot.opponents.base import ClassicBot
from sacbot.opponents.corners import Corners
from sacbot.opponents.crazy import Crazy
from sacbot.opponents.fire import Fire
from sacbot.opponents.gunner import Gunner
from sacbot.opponents.my_first_bot import MyFirstBot
from sacbot.opponents.orbiter import Orbiter
from sacbot.opponents.ram_fire import RamFire
from sacbot.opponents.rammer import Rammer
from sacbot.opponents.spin_bot import SpinBot
from sacbot.opponents.stop_go import StopGo
from sacbot.opponents.surfer import Surfer
from sacbot.opponents.target import Target
from sacbot.opponents.track_fire import TrackFire
from sacbot.opponents.velocibot import VelociBot
from sacbot.opponents.walls import Walls

CLASSICS: tuple[type[ClassicBot], ...] = (
    Corners, Crazy, Fire, MyFirstBot, RamFire, SpinBot, Target, TrackFire, VelociBot, Walls
)  # fmt: skip
# The advanced opponents (`sacbot.opponents.duel`): the strategies strong Robocode bots are built from.
ADVANCED: tuple[type[ClassicBot], ...] = (Orbiter, StopGo, Gunner, Surfer, Rammer)
OPPONENTS: dict[str, type[ClassicBot]] = {cls.name: cls for cls in (*CLASSICS, *ADVANCED)}
OPPONENT_NAMES: tuple[str, ...] = tuple(OPPONENTS)
CLASSIC_NAMES: tuple[str, ...] = tuple(cls.name for cls in CLASSICS)
ADVANCED_NAMES: tuple[str, ...] = tuple(cls.name for cls in ADVANCED)


# Opponents written in an outer layer (they play through the learner's features), loaded by name on first use
# so that this layer imports nothing above it: "module:class".
OUTER_OPPONENTS: dict[str, str] = {"Teacher": "sacbot.agent.teacher_bot:TeacherBot"}
ALL_OPPONENT_NAMES: tuple[str, ...] = (*OPPONENT_NAMES, *OUTER_OPPONENTS)


def opponent_class(name: str) -> type[ClassicBot]:
    """The class for a name (case-insensitive); a `UserError` (exit 2) listing the names otherwise."""
    wanted = name.strip().lower()
    for key, cls in OPPONENTS.items():
        if key.lower() == wanted:
            return cls
    for key, target in OUTER_OPPONENTS.items():
        if key.lower() == wanted:
            module, _, attr = target.partition(":")
            loaded: type[ClassicBot] = getattr(importlib.import_module(module), attr)
            return loaded
    raise UserError(f"unknown opponent {name!r}; choose one of: {', '.join(ALL_OPPONENT_NAMES)}", exit_code=2)


def make_opponent(name: str, seed: int | None = None) -> ClassicBot:
    return opponent_class(name)(seed)


__all__ = [
    "ADVANCED_NAMES",
    "ALL_OPPONENT_NAMES",
    "CLASSIC_NAMES",
    "OPPONENTS",
    "OPPONENT_NAMES",
    "ClassicBot",
    "make_opponent",
    "opponent_class",
]
