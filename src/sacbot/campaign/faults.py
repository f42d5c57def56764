"""Test-only fault injection into a campaign's chunks, off the production path.

A `FaultPlan` maps (chunk, attempt) to a fault: `kill_bot` (SIGKILL the training bot), `hang_bot` (SIGSTOP it)
or `server_crash` (stop the embedded arena under the game). `ArenaBackend` takes a plan (tests plug one in) or
reads one once from `SACBOT_CAMPAIGN_FAULTS` (e.g. `kill_bot@2.1,hang_bot@3.1,server_crash@1.1`; the
end-to-end tests set it on a real `sacbot train-campaign`). The fault strikes when round 1 of that attempt has
ended; the failure then travels the ordinary detection and retry path.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, cast

from sacbot.campaign.arena_lifecycle import ArenaServer
from sacbot.campaign.bot_env import signal_group
from sacbot.campaign.loop import Reporter
from sacbot.errors import UserError

FAULTS_ENV = "SACBOT_CAMPAIGN_FAULTS"
FaultKind = Literal["kill_bot", "hang_bot", "server_crash"]
_KINDS = ("kill_bot", "hang_bot", "server_crash")


def parse_faults(spec: str | None) -> dict[tuple[int, int], FaultKind]:
    """`kind@chunk.attempt,...` -> {(chunk, attempt): kind}; eval games count as chunk 0."""
    faults: dict[tuple[int, int], FaultKind] = {}
    for item in (spec or "").split(","):
        item = item.strip()
        if not item:
            continue
        kind, _, where = item.partition("@")
        chunk, _, attempt = where.partition(".")
        if kind not in _KINDS or not chunk.isdigit():
            raise UserError(f"bad {FAULTS_ENV} item {item!r}", exit_code=2)
        faults[(int(chunk), int(attempt or "1"))] = cast(FaultKind, kind)
    return faults


@dataclass(frozen=True)
class Fault:
    """One planned fault, armed against a game once its training bot runs."""

    kind: FaultKind

    def arm(self, bot_pid: int, server: ArenaServer, report: Reporter) -> Callable[[], None]:
        """The hook the game watch calls when round 1 has ended."""
        return lambda: inject(self.kind, bot_pid, server, report)


@dataclass(frozen=True)
class FaultPlan:
    faults: Mapping[tuple[int, int], FaultKind]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> FaultPlan | None:
        """The plan in `SACBOT_CAMPAIGN_FAULTS` (None when it names none); a bad item is a UserError."""
        faults = parse_faults((os.environ if environ is None else environ).get(FAULTS_ENV))
        return cls(faults) if faults else None

    def at(self, chunk: int, attempt: int) -> Fault | None:
        kind = self.faults.get((chunk, attempt))
        return None if kind is None else Fault(kind)


def inject(kind: FaultKind, bot_pid: int, server: ArenaServer, report: Reporter) -> None:
    report({"event": "fault_injected", "fault": kind})
    if kind == "kill_bot":
        signal_group(bot_pid, signal.SIGKILL)
    elif kind == "hang_bot":
        signal_group(bot_pid, signal.SIGSTOP)
    elif kind == "server_crash":
        crash_server(server)


def crash_server(server: ArenaServer) -> None:
    """The server goes away under the game; the reference stays, so the next attempt finds a dead arena and
    restarts it like after a real crash."""
    arena = server.arena
    if arena is not None:
        # From another thread: the caller is the controller's loop, which must stay free to answer.
        threading.Thread(target=arena.stop, name="sacbot-fault-server-crash", daemon=True).start()
