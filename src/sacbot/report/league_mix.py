"""The league's opponent mix (pure): the pool's draw probabilities per opponent group (the learner's own
snapshots grouped), the opponent drawn and the snapshots taken, from the campaign's `league_draw` and
`snapshot` events (by chunk) or from train-fast's `league.jsonl` (by env steps).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sacbot.records import CampaignEvent, LeagueLine, LeaguePoolLine, LeagueSnapshotLine
from sacbot.report.data import opponent_group


@dataclass(frozen=True)
class LeagueMix:
    """The pool's probabilities at each x (chunk, or env steps), per opponent group (snapshots grouped,
    stacked last); the opponent drawn at x, when known; and where snapshots were taken."""

    x_label: str
    xs: list[float]
    shares: dict[str, list[float]]
    drawn: list[tuple[float, str]] = field(default_factory=list)
    snapshots: list[float] = field(default_factory=list)


def _mix(
    x_label: str,
    points: Sequence[tuple[float, dict[str, float]]],
    drawn: list[tuple[float, str]],
    snaps: list[float],
) -> LeagueMix | None:
    if not points:
        return None
    names: list[str] = []
    for _, probs in points:
        for name in probs:
            group = opponent_group(name)
            if group not in names:
                names.append(group)
    names.sort(key=lambda g: g.endswith("(own snapshots)"))  # stable: opponents first, snapshots on top
    shares: dict[str, list[float]] = {g: [] for g in names}
    for _, probs in points:
        total = sum(probs.values()) or 1.0
        grouped = dict.fromkeys(names, 0.0)
        for name, p in probs.items():
            grouped[opponent_group(name)] += p / total
        for g in names:
            shares[g].append(grouped[g])
    return LeagueMix(x_label, [x for x, _ in points], shares, drawn, snaps)


def league_draws(events: Sequence[CampaignEvent]) -> dict[int, tuple[CampaignEvent, dict[str, float]]]:
    """Chunk -> its first `league_draw` event with a probability table, and that table (a resumed chunk keeps
    the opponent its first draw logged), in chunk order."""
    first: dict[int, tuple[CampaignEvent, dict[str, float]]] = {}
    for ev in events:
        chunk = ev.chunk
        if ev.event == "league_draw" and chunk is not None and chunk not in first:
            probabilities = ev.probabilities()
            if probabilities is not None:
                first[chunk] = (ev, probabilities)
    return {c: first[c] for c in sorted(first)}


def campaign_league_mix(events: Sequence[CampaignEvent]) -> LeagueMix | None:
    """The campaign's `league_draw` events: per chunk the pool's probabilities and the opponent drawn;
    `snapshot` events' chunks. None without draws."""
    draws = league_draws(events)
    points = [(float(c), probabilities) for c, (_, probabilities) in draws.items()]
    drawn = [(float(c), opponent_group(ev.opponent)) for c, (ev, _) in draws.items() if ev.opponent]
    snaps = sorted({float(ev.chunk) for ev in events if ev.event == "snapshot" and ev.chunk is not None})
    return _mix("chunk", points, drawn, snaps)


def fast_league_mix(lines: Sequence[LeagueLine]) -> LeagueMix | None:
    """train-fast's league.jsonl: the pool's probabilities at each save, by env steps; snapshots' steps."""
    points = sorted(
        ((float(line.env_steps), line.pool) for line in lines if isinstance(line, LeaguePoolLine)),
        key=lambda point: point[0],
    )
    snaps = sorted({float(line.env_steps) for line in lines if isinstance(line, LeagueSnapshotLine)})
    return _mix("env steps", points, [], snaps)
