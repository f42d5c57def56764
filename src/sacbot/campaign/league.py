"""The campaign's league (`[league]`): frozen snapshots of the learner in the pool, and PFSP sampling.

Snapshots. After every `snapshot_every`-th completed chunk c, `latest` becomes a frozen twin bot
`<out>/league/SacSnap<c>/` (written by `sacbot.campaign.twin.make_twin`, so it plays `sacbot play --eval`
from its own `frozen.zip`) and joins the pool; beyond `snapshot_cap` the oldest leaves it: its folder is
deleted, and so is the training bot's best slot against it (`weights/opponents/SacSnap<c>.zip`). The
campaign log is the truth: a `snapshot` event is written once the folder is complete, and the pool is the
last `snapshot_cap` snapshots the log names (whose folders are whole). A resumed run therefore rebuilds the
same pool, takes a snapshot a kill interrupted (`latest` does not change between a chunk and the next), and
deletes folders the log no longer lists.

Sampling. Chunk c's opponent is drawn from the pool (the `[opponents]` weights, plus the snapshots sharing
`snapshot_weight` evenly) with a generator seeded by (seed, c): "weights" keeps the weights, "pfsp"
multiplies each by max(floor, (1 - win rate) ** power) (`sacbot.opponents.sampling`), or by 1 for an entry
with no round among the last `pfsp_revisit` rounds (when set). The win rates and those rounds come from
the results of chunks and evals before chunk c (`chunk_done` events, `eval_log.jsonl`), which a crash inside
chunk c does not change, so a retried or resumed chunk meets the same opponent. A `league_draw` event per
chunk records the pool, the probabilities, the win rates and the opponent (a resumed chunk reuses the
opponent its first draw logged).
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

from sacbot.campaign.config import SNAPSHOT_PREFIX, Campaign, LeagueConfig, opponent_name
from sacbot.opponents.sampling import Record, league_draw, recent_results, rounds_since
from sacbot.records import CampaignEvent, read_eval_log

if TYPE_CHECKING:
    from sacbot.rundir import RunPaths


def snapshot_name(chunk: int) -> str:
    return f"{SNAPSHOT_PREFIX}{chunk}"


class CampaignLeague:
    def __init__(self, campaign: Campaign, paths: RunPaths) -> None:
        if campaign.league is None:
            raise ValueError("the campaign has no [league] table")
        self.campaign = campaign
        self.cfg: LeagueConfig = campaign.league
        self.paths = paths
        self.folder = paths.league

    # -- snapshots ------------------------------------------------------------------------------------------

    def snapshot_due(self, chunk: int) -> bool:
        every = self.cfg.snapshot_every
        return every > 0 and chunk > 0 and chunk % every == 0

    @staticmethod
    def logged_snapshots(events: list[CampaignEvent]) -> list[str]:
        """Every snapshot the log records, oldest first."""
        names: list[str] = []
        for ev in events:
            if ev.event == "snapshot" and ev.name is not None and ev.name not in names:
                names.append(ev.name)
        return names

    def snapshot_taken(self, events: list[CampaignEvent], chunk: int) -> bool:
        return snapshot_name(chunk) in self.logged_snapshots(events)

    def whole(self, name: str) -> bool:
        """A snapshot folder make-twin finished (its marker is written last)."""
        from sacbot.campaign.twin import MARKER

        folder = self.folder / name
        return all((folder / f).is_file() for f in (MARKER, "frozen.zip", f"{name}.json"))

    def pool_snapshots(self, events: list[CampaignEvent]) -> list[str]:
        """The snapshots in the pool now: the last `snapshot_cap` the log records, oldest first."""
        return [n for n in self.logged_snapshots(events)[-self.cfg.snapshot_cap :] if self.whole(n)]

    def take_snapshot(self, chunk: int, events: list[CampaignEvent]) -> dict[str, Any] | None:
        """Write `SacSnap<chunk>` from `latest`; the fields of its `snapshot` event (None: no `latest` yet).

        The caller logs the event, then calls `prune` with the new pool: a kill before the event leaves a
        folder that the next run rewrites; a kill after it, folders that `prune` deletes."""
        from sacbot.campaign.twin import make_twin

        if not self.paths.latest.is_file():
            return None
        name = snapshot_name(chunk)
        folder = self.folder / name
        if folder.exists() and not self.whole(name):
            shutil.rmtree(folder)  # a make-twin a kill interrupted: ours to redo
        make_twin(self.paths.latest, name, self.folder, learning=False)
        before = self.pool_snapshots(events)
        pool = [*(n for n in self.logged_snapshots(events) if n != name), name][-self.cfg.snapshot_cap :]
        pool = [n for n in pool if n == name or self.whole(n)]
        return {
            "chunk": chunk,
            "name": name,
            "folder": str(folder),
            "pool": pool,
            "removed": [n for n in before if n not in pool],
        }

    def prune(self, pool: list[str]) -> list[str]:
        """Delete the snapshot folders (and the training bot's best slots against them) not in `pool`."""
        removed = []
        if self.folder.is_dir():
            for folder in sorted(self.folder.iterdir()):
                if folder.is_dir() and folder.name.startswith(SNAPSHOT_PREFIX) and folder.name not in pool:
                    shutil.rmtree(folder)
                    removed.append(folder.name)
        slots = self.paths.weights.opponents
        if slots.is_dir():
            for slot in slots.glob(f"{SNAPSHOT_PREFIX}*.zip"):
                if slot.stem not in pool:
                    slot.unlink(missing_ok=True)
        return removed

    # -- sampling -------------------------------------------------------------------------------------------

    def records(self, chunk: int, events: list[CampaignEvent]) -> list[Record]:
        """The results of the chunks and evals before chunk `chunk`, oldest first (an eval after chunk c
        counts after that chunk's own rounds)."""
        keyed: list[tuple[tuple[int, int], Record]] = []
        for ev in events:
            c, opp, rounds, wins = ev.chunk, ev.opponent, ev.rounds, ev.wins
            if (
                ev.event == "chunk_done"
                and c is not None
                and c < chunk
                and opp is not None
                and rounds is not None
                and wins is not None
            ):
                keyed.append(((c, 0), Record(opp, rounds, float(wins))))
        for rec in read_eval_log(self.paths.eval_log):
            if rec.chunk < chunk:
                keyed.append(((rec.chunk, 1), Record(rec.opponent, rec.rounds, float(rec.wins))))
        keyed.sort(key=lambda item: item[0])  # stable: the log's order within a key
        return [r for _, r in keyed]

    def draw(self, chunk: int, events: list[CampaignEvent]) -> tuple[str, dict[str, Any]]:
        """Chunk `chunk`'s opponent (a name, or a snapshot's folder) and its `league_draw` fields."""
        entries: dict[str, str] = {}
        base: dict[str, float] = {}
        for entry, weight in self.campaign.opponents.items():
            entries[opponent_name(entry)] = entry
            base[opponent_name(entry)] = weight
        snapshots = self.pool_snapshots(events)
        for name in snapshots:
            entries[name] = str((self.folder / name).resolve())
            base[name] = self.cfg.snapshot_weight / len(snapshots)
        cfg = self.cfg
        records = self.records(chunk, events)
        stale = rounds_since(records).stale(base, cfg.pfsp_revisit)
        drawn = league_draw(
            base,
            recent_results(records, cfg.pfsp_window),
            cfg.sampling,
            f"sacbot-campaign:{self.campaign.seed}:{chunk}",
            cfg.pfsp_power,
            cfg.pfsp_floor,
            cfg.pfsp_curve,
            stale,
        )
        opponent = drawn.opponent
        logged = [e for e in events if e.event == "league_draw" and e.chunk == chunk]
        first = logged[0].opponent if logged else None
        if first is not None and first in drawn.weights:
            opponent = first  # a resumed chunk meets the opponent it first drew
        fields = {
            "chunk": chunk,
            "sampling": cfg.sampling,
            "opponent": opponent,
            "pool": {n: round(p, 6) for n, p in drawn.probabilities.items()},
            "win_rates": {n: round(r, 4) for n, r in drawn.win_rates.items()},
            "rounds": drawn.rounds,
            "stale": stale,
            "snapshots": snapshots,
            "resumed": bool(logged),
        }
        return entries[opponent], fields
