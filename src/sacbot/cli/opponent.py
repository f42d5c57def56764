"""`sacbot opponent NAME`: run one of the built-in opponents (classic, advanced, Teacher) as a bot."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

_NAMES_HELP = (
    "A classic (Corners, Crazy, Fire, MyFirstBot, RamFire, SpinBot, Target, TrackFire, VelociBot, Walls), "
    "an advanced opponent (Orbiter, StopGo, Gunner, Surfer, Rammer) or Teacher."
)


def opponent(
    name: str = typer.Argument(..., help=_NAMES_HELP),
    bot_json: Path | None = typer.Option(
        None, "--bot-json", help="Identity file (<Name>.json); else BOT_* variables; else the built-in name."
    ),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the opponent's own randomness."),
) -> None:
    """Run a built-in opponent against the server at SERVER_URL (secret SERVER_SECRET) for one game."""
    from sacbot.client import BotIdentity, resolve_identity, run_bot
    from sacbot.opponents import opponent_class
    from sacbot.settings import load_bot_environment

    cls = opponent_class(name)  # an unknown name: one line, exit 2
    env = load_bot_environment()
    if bot_json is not None or (env.bot_name and env.bot_version and env.bot_authors):
        identity = resolve_identity(json_path=bot_json)
    else:
        identity = BotIdentity(
            name=cls.name,
            version="1.0.0",
            authors=["sacbot"],
            description=f"sacbot's built-in opponent {cls.name}",
            game_types=["classic", "1v1", "melee", "custom"],
        )
    end = run_bot(cls(seed), identity, env.server_url, env.server_secret)
    stats = end.stats
    print(
        f"sacbot opponent {cls.name}: {stats.ticks} ticks, {stats.intents} intents, "
        f"{stats.skipped_turns} skipped turns",
        file=sys.stderr,
        flush=True,
    )
