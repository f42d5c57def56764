"""A recording's game as frames: `Scene` holds the setup, the participants, every tick and the results known
at each tick; `pick_frames` chooses the ticks a clip draws."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sacbot.errors import UserError
from sacbot.viewer.pages import style as load_style


class Scene:
    """A recording's game as the page holds it: the setup, the participants, every tick, and the accumulated
    results known at each tick."""

    def __init__(self, messages: Sequence[dict[str, Any]]) -> None:
        self.setup: dict[str, Any] = {"arenaWidth": 800, "arenaHeight": 600, "numberOfRounds": 0}
        self.participants: dict[int, dict[str, Any]] = {}
        self.ticks: list[dict[str, Any]] = []
        self.results: list[list[dict[str, Any]] | None] = []
        current: list[dict[str, Any]] | None = None
        for msg in messages:
            kind = msg.get("type")
            if kind == "GameStartedEventForObserver":
                self.setup = msg["gameSetup"]
                self.participants = {p["id"]: p for p in msg.get("participants", [])}
            elif kind == "TickEventForObserver":
                for b in msg["botStates"]:
                    self.participants.setdefault(
                        b["id"], {"id": b["id"], "name": b.get("name", f"Bot {b['id']}"), "version": ""}
                    )
                self.ticks.append(msg)
                self.results.append(current)
            elif kind in ("RoundEndedEventForObserver", "GameEndedEventForObserver"):
                current = msg["results"]
                if self.results:
                    self.results[-1] = current

    def rounds(self) -> list[int]:
        return sorted({t["roundNumber"] for t in self.ticks})


def pick_frames(
    scene: Scene, *, speed: float, fps: float, round_number: int | None, max_frames: int
) -> list[int]:
    """Tick indices to draw: every `speed * replayTps / fps`-th turn of the chosen round (or of all), last
    turn included, at most `max_frames`."""
    tps = float(load_style()["replayTps"])
    chosen = [
        i for i, t in enumerate(scene.ticks) if round_number is None or t["roundNumber"] == round_number
    ]
    if not chosen:
        raise UserError(f"--round {round_number}: the recording has rounds {_ranges(scene.rounds())}")
    step = speed * tps / fps
    picked: list[int] = []
    pos = 0.0
    while int(pos) < len(chosen) and len(picked) < max_frames:
        picked.append(chosen[int(pos)])
        pos += step
    if picked[-1] != chosen[-1] and len(picked) < max_frames:
        picked.append(chosen[-1])
    return picked


def _ranges(rounds: list[int]) -> str:
    return f"{rounds[0]}-{rounds[-1]}" if len(rounds) > 1 else str(rounds[0])
