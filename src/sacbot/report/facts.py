"""The summary's facts about a run (pure): each opponent's latest eval and the evals of one chunk, their
totals, the chunk of the global best, and the (name, value) lines of the run as a whole (chunks, sessions,
active time, rounds, env steps, latencies, the league's draws, the best composite).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sacbot.records import EvalRecord
from sacbot.report.data import ActiveClock, RunData, pretrain_end_steps
from sacbot.report.league_mix import fast_league_mix, league_draws
from sacbot.report.series import eval_opponents


def latest_evals(evals: Sequence[EvalRecord]) -> list[EvalRecord]:
    """Each opponent's most recent eval, in first-appearance order."""
    last: dict[str, EvalRecord] = {}
    for rec in sorted(evals, key=lambda r: (r.chunk, r.time)):
        last[rec.opponent] = rec
    return [last[name] for name in eval_opponents(evals)]


def evals_at_chunk(evals: Sequence[EvalRecord], chunk: int) -> list[EvalRecord]:
    return [r for r in evals if r.chunk == chunk]


def best_chunk(data: RunData) -> int | None:
    """The chunk whose candidate became the global best last (campaign log, else the best_score mirror)."""
    promoted = [e.chunk for e in data.events if e.event == "promoted"]
    chunks = [c for c in promoted if c is not None]
    return chunks[-1] if chunks else data.best.chunk


@dataclass(frozen=True)
class Totals:
    rounds: int
    wins: int
    win_rate: float
    score_share: float  # mean over opponents


def totals(rows: Sequence[EvalRecord]) -> Totals | None:
    if not rows:
        return None
    rounds = sum(r.rounds for r in rows)
    wins = sum(r.wins for r in rows)
    return Totals(
        rounds, wins, wins / rounds if rounds else 0.0, sum(r.score_share for r in rows) / len(rows)
    )


def duration_text(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    minutes = seconds / 60
    if minutes < 120:
        return f"{minutes:.1f} min"
    return f"{int(minutes // 60)} h {int(minutes % 60):02d} min"


def run_facts(data: RunData, clock: ActiveClock) -> list[tuple[str, str]]:
    """(name, value) lines for the summary; only facts the folder actually holds."""
    facts: list[tuple[str, str]] = []
    starts = [e for e in data.events if e.event == "start"]
    name = next((e.campaign for e in starts if e.campaign is not None), None)
    if name:
        facts.append(("campaign", name))
    done = {e.chunk for e in data.events if e.event == "chunk_done" and e.chunk is not None}
    budget = next((e.budget for e in reversed(starts) if e.budget is not None), None)
    if done or budget is not None:
        facts.append(("chunks completed", f"{len(done)}" + (f" of {budget}" if budget is not None else "")))
    finished = [e for e in data.events if e.event == "finished"]
    if data.events:
        facts.append(("finished", "yes" if finished else "no (interrupted, failed or still running)"))
        facts.append(("sessions (starts and resumes)", str(len(starts))))
        retries = sum(1 for e in data.events if e.event == "chunk_failed")
        gave_up = sum(1 for e in data.events if e.event == "gave_up")
        facts.append(
            ("retried chunk/eval attempts", str(retries) + (f" (gave up {gave_up}x)" if gave_up else ""))
        )
        restarts = sum(1 for e in data.events if e.event == "server_restart")
        if restarts:
            facts.append(("server restarts", str(restarts)))
    facts.append(("active time", duration_text(clock.total_s)))
    if clock.span_s > clock.total_s + 1:
        facts.append(("wall-clock span (idle gaps included)", duration_text(clock.span_s)))
    trained = [e for e in data.events if e.event == "chunk_done"]
    rounds = sum(e.rounds or 0 for e in trained)
    wins = sum(e.wins or 0 for e in trained)
    if rounds:
        facts.append(("training rounds (completed chunks)", f"{rounds} ({wins / rounds:.1%} won)"))
    if data.pretrain_rounds:
        facts.append(("pretraining rounds (train-fast)", str(data.pretrain_rounds)))
    if data.metrics:
        last = data.metrics[-1]
        facts.append(("env steps", f"{last.env_steps:,}"))
        if last.updates is not None:
            facts.append(("updates", f"{last.updates:,}"))
        pre = pretrain_end_steps(data)
        if pre is not None:
            facts.append(("env steps from pretraining", f"{pre:,}"))
    if data.rounds and data.kind == "train-fast":
        facts.append(("rounds logged (train-fast, in-process)", str(len(data.rounds))))
    elif data.rounds:
        skipped = sum(r.skipped_turns or 0 for r in data.rounds)
        facts.append(("real-time rounds logged by the bot", str(len(data.rounds))))
        facts.append(("skipped turns (all real-time rounds)", str(skipped)))
        p99 = sorted(r.tick_to_intent_p99_ms for r in data.rounds if r.tick_to_intent_p99_ms is not None)
        if p99:
            facts.append(("tick-to-intent p99, median over rounds", f"{p99[len(p99) // 2]:.2f} ms"))
        worst = [r.tick_to_intent_max_ms for r in data.rounds if r.tick_to_intent_max_ms is not None]
        if worst:
            facts.append(("tick-to-intent max, worst round", f"{max(worst):.2f} ms"))
        facts.append(("dropped transitions", str(sum(r.dropped_transitions or 0 for r in data.rounds))))
    facts += league_facts(data)
    score, kind = data.best.score, data.best.kind
    if score is None:  # no best_score mirror nor readable best.zip: the campaign log's last word on the best
        logged = [e.best for e in data.events if e.event in ("eval_done", "finished") and e.best is not None]
        score = logged[-1] if logged else None
    if score is not None:
        chunk = best_chunk(data)
        where = f" at chunk {chunk}" if chunk is not None else ""
        facts.append(("best composite", f"{score:.4f}{where} ({kind or 'kind not recorded'})"))
    if data.best.env_steps is not None:
        facts.append(("best checkpoint env steps", f"{data.best.env_steps:,}"))
    if data.round_counter is not None:
        facts.append(("bot round counter", str(data.round_counter)))
    return facts


def league_facts(data: RunData) -> list[tuple[str, str]]:
    """How often the league drew each opponent (campaign), and the fast league's saves and snapshots."""
    facts: list[tuple[str, str]] = []
    draws = league_draws(data.events)
    if draws:
        counts: dict[str, int] = {}
        for ev, _ in draws.values():
            name = ev.opponent or "(not logged)"
            counts[name] = counts.get(name, 0) + 1
        drawn = ", ".join(f"{name} {k}x" for name, k in sorted(counts.items(), key=lambda kv: -kv[1]))
        facts.append(("league draws (chunks)", f"{len(draws)}: {drawn}"))
        snapshots = {e.name for e in data.events if e.event == "snapshot"}
        if snapshots:
            facts.append(("league snapshots taken", str(len(snapshots))))
    fast = fast_league_mix(data.fast_league)
    if fast is not None:
        facts.append(("fast league pool lines (train-fast saves)", str(len(fast.xs))))
        if fast.snapshots:
            facts.append(("fast league snapshots taken", str(len(fast.snapshots))))
    return facts
