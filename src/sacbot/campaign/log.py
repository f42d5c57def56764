"""The campaign log (JSONL, append-only) and the resume state read back from it.

Each line is one event object with an `event` name and a `time`. Re-running the same campaign reads the log to
learn which chunks completed, which evals ran and whether pretraining is done, then carries on from there.
A line torn by a kill is skipped when reading, so a crash can cost at most the event in flight.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sacbot.campaign.scoring import EvalRecord


def append_jsonl(path: Path, obj: dict[str, Any]) -> None:
    """Append one line and fsync it: the log survives a kill of the campaign right after the call."""
    from sacbot.checkpoint import append_jsonl as append_line

    append_line(path, obj, allow_nan=False)


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Every well-formed object line; torn or foreign lines are skipped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield obj


class CampaignLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, event: str, **fields: Any) -> dict[str, Any]:
        obj = {"event": event, "time": round(time.time(), 3), **fields}
        append_jsonl(self.path, obj)
        return obj

    def events(self) -> list[dict[str, Any]]:
        return list(read_jsonl(self.path))


@dataclass
class ResumeState:
    """What a previous run of the same campaign already did."""

    completed: int = 0
    evaluated: set[int] = field(default_factory=set)
    pretrained: bool = False
    retries: int = 0
    runs: int = 0

    @classmethod
    def from_events(cls, events: list[dict[str, Any]]) -> ResumeState:
        state = cls()
        done: set[int] = set()
        for ev in events:
            kind = ev.get("event")
            if kind == "chunk_done" and isinstance(ev.get("chunk"), int):
                done.add(ev["chunk"])
            elif kind == "eval_done" and isinstance(ev.get("chunk"), int):
                state.evaluated.add(ev["chunk"])
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


def read_eval_history(path: Path) -> list[EvalRecord]:
    """eval_log.jsonl as records, keeping the last line per (opponent, chunk): an eval rerun after a crash
    replaces its partial first try instead of counting twice."""
    latest: dict[tuple[str, int], EvalRecord] = {}
    for obj in read_jsonl(path):
        try:
            rec = EvalRecord.from_json(obj)
        except (KeyError, TypeError, ValueError):
            continue
        key = (rec.opponent, rec.chunk)
        latest.pop(key, None)  # re-insert so order follows the newest line
        latest[key] = rec
    return list(latest.values())
