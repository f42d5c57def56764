"""The arena a campaign's games run on, and its lifecycle: the embedded arena (started on first use, restarted
when it stopped, stopped at the end) or a running server at a URL that the campaign only connects to."""

from __future__ import annotations

import secrets
from typing import Any, Protocol

from sacbot.campaign.config import Campaign
from sacbot.campaign.loop import Reporter
from sacbot.errors import UserError


class GameSelection(Protocol):
    """The embedded arena's recorder, recording the games it is armed for
    (`sacbot.viewer.recording.SelectedGames`)."""

    def start_game(self) -> None: ...

    def record(self, data: bytes) -> None: ...

    def end_game(self) -> None: ...

    def arm(self, kind: str, label: str) -> bool: ...

    def settle(self) -> None: ...

    def close(self) -> None: ...


class ArenaServer:
    """The server of a campaign's games; `address` hands out a live one, `close` stops what it started."""

    def __init__(self, campaign: Campaign, recorder: GameSelection | None = None) -> None:
        """`recorder` (the embedded arena's) records the games it selects; a server at a URL cannot."""
        if recorder is not None and not campaign.server.embedded:
            raise UserError("recording needs the embedded arena (no server url)", 2)
        self.config = campaign.server
        self.seed = campaign.seed
        self.recorder = recorder
        self.arena: Any = None  # the embedded arena, once started
        self._secrets = (secrets.token_hex(8), secrets.token_hex(8))  # (controller, bot)

    def address(self, report: Reporter) -> tuple[str, str | None, str | None]:
        """(url, controller secret, bot secret) of a running server: the embedded arena is started, or
        restarted when it stopped (a crash), first."""
        cfg = self.config
        if not cfg.embedded:
            assert cfg.url is not None
            return cfg.url, cfg.controller_secret, cfg.bot_secret
        if self.arena is not None and not self.alive():
            report({"event": "server_restart", "reason": "the embedded arena stopped"})
            self.stop()
        if self.arena is None:
            from sacbot.arena.server import EmbeddedArena

            controller, bot = self._secrets
            self.arena = EmbeddedArena(
                bot_secrets={bot},
                controller_secrets={controller},
                tps=cfg.tps,
                seed=self.seed,
                recorder=self.recorder,
            ).start()
        return self.arena.url, *self._secrets

    def alive(self) -> bool:
        """Whether the embedded arena still runs; a server at a URL always counts (its loss shows up as a lost
        controller connection)."""
        if not self.config.embedded:
            return True
        thread = getattr(self.arena, "_thread", None)
        return thread is not None and thread.is_alive()

    def stop(self) -> None:
        """Stop the embedded arena (if started); the next `address` starts a fresh one."""
        if self.arena is not None:
            try:
                self.arena.stop()
            finally:
                self.arena = None

    def close(self) -> None:
        try:
            self.stop()
        finally:
            if self.recorder is not None:
                self.recorder.close()
