"""The classic opponents: the ten Tank Royale sample behaviours, written as per-tick policies.

Each is a `ClassicBot` (the `BotPolicy` contract: `on_tick(TickEventForBot) -> BotIntent` plus the lifecycle
hooks), so the same object plays over WebSocket (`sacbot opponent NAME`, `bots/<Name>/`) and inside the engine
(`sacbot.env`). `make_opponent("SpinBot", seed=1)` builds one; `OPPONENT_NAMES` lists them.
"""

from __future__ import annotations

from sacbot.errors import UserError
from sacbot.opponents.base import ClassicBot
from sacbot.opponents.corners import Corners
from sacbot.opponents.crazy import Crazy
from sacbot.opponents.fire import Fire
from sacbot.opponents.my_first_bot import MyFirstBot
from sacbot.opponents.ram_fire import RamFire
from sacbot.opponents.spin_bot import SpinBot
from sacbot.opponents.target import Target
from sacbot.opponents.track_fire import TrackFire
from sacbot.opponents.velocibot import VelociBot
from sacbot.opponents.walls import Walls

OPPONENTS: dict[str, type[ClassicBot]] = {
    cls.name: cls
    for cls in (Corners, Crazy, Fire, MyFirstBot, RamFire, SpinBot, Target, TrackFire, VelociBot, Walls)
}
OPPONENT_NAMES: tuple[str, ...] = tuple(OPPONENTS)


def opponent_class(name: str) -> type[ClassicBot]:
    """The class for a name (case-insensitive); a `UserError` (exit 2) listing the names otherwise."""
    for key, cls in OPPONENTS.items():
        if key.lower() == name.strip().lower():
            return cls
    raise UserError(f"unknown opponent {name!r}; choose one of: {', '.join(OPPONENT_NAMES)}", exit_code=2)


def make_opponent(name: str, seed: int | None = None) -> ClassicBot:
    return opponent_class(name)(seed)


__all__ = ["OPPONENTS", "OPPONENT_NAMES", "ClassicBot", "make_opponent", "opponent_class"]
