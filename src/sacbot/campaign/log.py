"""The campaign log (`sacbot.records.CampaignEvent` lines, append-only) and the resume state read from it.

Each line is one event with an `event` name and a `time`. Re-running the same campaign reads the log to learn
which chunks completed, which evals ran and whether pretraining is done, then carries on from there. A line
torn by a kill is skipped when reading, so a crash can cost at most the event in flight.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sacbot.records import CampaignEvent, append_event, read_events


class CampaignLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, event: str, **fields: Any) -> dict[str, Any]:
        """Log one event, fsynced (it survives a kill of the campaign just after); the logged dict."""
        obj = {"event": event, "time": round(time.time(), 3), **fields}
        append_event(self.path, obj)
        return obj

    def events(self) -> list[CampaignEvent]:
        return read_events(self.path)


@dataclass
class ResumeState:
    """What a previous run of the same campaign already did."""

    completed: int = 0
    evaluated: set[int] = field(default_factory=set)
    pretrained: bool = False
    retries: int = 0
    runs: int = 0

    @classmethod
    def from_events(cls, events: list[CampaignEvent]) -> ResumeState:
        state = cls()
        done: set[int] = set()
        for ev in events:
            kind = ev.event
            if kind == "chunk_done" and ev.chunk is not None:
                done.add(ev.chunk)
            elif kind == "eval_done" and ev.chunk is not None:
                state.evaluated.add(ev.chunk)
            elif kind == "pretrain_done":
                state.pretrained = True
            elif kind == "chunk_failed":
                state.retries += 1
            elif kind == "start":
                state.runs += 1
        # Chunks complete in order, so the count of the contiguous prefix 1..n is the progress.
        while state.completed + 1 in done:
            state.completed += 1
        return state
