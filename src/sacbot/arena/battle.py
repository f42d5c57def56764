"""One battle end to end: an embedded arena on a free port, the booted bot directories, a controller, results.

`run_battle(dirs, setup)` is what `sacbot arena run` calls; campaigns can call it too. A bot process that
exits before it connects, or a bot that never connects within `connect_timeout`, ends it with a `UserError`.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from sacbot.arena.booter import Booter, read_bot_dir
from sacbot.arena.controller import GameResult, play_game
from sacbot.arena.core_types import GameRecorder
from sacbot.arena.server import EmbeddedArena
from sacbot.errors import UserError
from sacbot.protocol import GameSetup, Message, TickEventForObserver


def bot_names(dirs: Sequence[str | Path]) -> list[str]:
    """The names the booted processes will announce (a team directory contributes each member)."""
    names: list[str] = []
    for d in dirs:
        entry = read_bot_dir(d)
        if entry.team_members:
            names.extend(read_bot_dir(entry.dir.parent / m).name for m in entry.team_members)
        else:
            names.append(entry.name)
    return names


def run_battle(
    dirs: Sequence[str | Path],
    setup: GameSetup,
    *,
    connect_timeout: float = 30.0,
    tps: int = -1,
    seed: int | None = None,
    log_dir: str | Path | None = None,
    on_event: Callable[[Message], None] | None = None,
    on_tick: Callable[[TickEventForObserver], None] | None = None,
    recorder: GameRecorder | None = None,
    debug_graphics: bool = False,
) -> GameResult:
    """`recorder` gets the game's observer messages (`sacbot.viewer.recording.RecordingWriter` writes them
    as a `.battle.gz` file); `debug_graphics` lets every bot paint (REFERENCE.md, BotPolicyUpdate)."""
    names = bot_names(dirs)  # reads every JSON first: a bad directory fails before anything starts
    if log_dir is None:
        # Keep the bots' output anyway, so an early exit can be explained; it goes away with the battle.
        with tempfile.TemporaryDirectory(prefix="sacbot-arena-") as tmp:
            return run_battle(
                dirs,
                setup,
                connect_timeout=connect_timeout,
                tps=tps,
                seed=seed,
                log_dir=tmp,
                on_event=on_event,
                on_tick=on_tick,
                recorder=recorder,
                debug_graphics=debug_graphics,
            )
    bot_secret, ctl_secret = secrets.token_urlsafe(12), secrets.token_urlsafe(12)
    with (
        EmbeddedArena(
            bot_secrets={bot_secret},
            controller_secrets={ctl_secret},
            tps=tps,
            seed=seed,
            recorder=recorder,
            debug_graphics=debug_graphics,
        ) as arena,
        Booter(arena.url, bot_secret, log_dir=log_dir) as booter,
    ):
        booted = booter.boot_all(dirs)

        def alive() -> None:
            for bot in booted:
                code = bot.exit_code()
                if code is not None:
                    # One line: the output's last lines, without the frames a rich error box draws.
                    parts = [line.strip(" │╭╮╰╯─") for line in bot.log_tail().splitlines()]
                    tail = " / ".join(p for p in parts if p)
                    raise UserError(
                        f"bot {bot.entry.name} ({bot.entry.dir}) exited with code {code} before "
                        f"connecting" + (f": {tail}" if tail else "")
                    )

        return play_game(
            arena.url,
            setup,
            names,
            secret=ctl_secret,
            connect_timeout=connect_timeout,
            on_event=on_event,
            on_tick=on_tick,
            alive=alive,
        )
