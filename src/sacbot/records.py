"""One pydantic model per record sacbot keeps on disk, and the one place each is read and written.

| record | file (`sacbot.rundir`) | written by | model |
|---|---|---|---|
| the round counter | weights folder: `round_counter.json` | play, train-fast, make-twin | `RoundCounter` |
| a round line | weights folder: `rounds.jsonl` | play, train-fast | `RoundLine` |
| a metrics line | weights folder: `training_metrics.jsonl` | play, train-fast | `MetricsLine` |
| a league line | train-fast's `league.jsonl` | train-fast's league | `LeagueLine` |
| a campaign event | run folder: `campaign_log.jsonl` | the campaign loop | `CampaignEvent` |
| an eval record | run folder: `eval_log.jsonl` | the campaign loop | `EvalRecord` |
| the best score | run folder: `best_score.json` | the campaign loop, at a promotion | `BestScore` |

Reading never fails on a bad record: a JSONL line that is not an object, or that its model refuses, is
skipped (and counted, for `sacbot report`); a bad round counter or best score reads as missing. The JSONL
lines' models keep the keys they do not name (a newer writer's fields pass through), and their optional
fields read a value that is not a finite number (or not a non-empty string) as missing, so an odd field costs
that field, not the line. The per-round writers (`sacbot play`'s trainer thread, train-fast's loop) append
plain dicts with these keys through `sacbot.jsonl`, without a validation pass; the other records are written
from their model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError

from sacbot import jsonl
from sacbot.rundir import RunPaths

T = TypeVar("T")
TRAIN_FAST = "sacbot train-fast"  # the `written_by` of train-fast's round and metrics lines


# -- tolerant field types ------------------------------------------------------------------------------------


def _finite(value: Any) -> float | None:
    """A JSON number that is finite, else None (a bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _whole(value: Any) -> int | None:
    number = _finite(value)
    return None if number is None else int(number)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


Number = Annotated[float, BeforeValidator(_finite)]  # required: anything else refuses the record
Count = Annotated[int, BeforeValidator(_whole)]
MaybeNumber = Annotated[float | None, BeforeValidator(_finite)]  # optional: anything else reads as None
MaybeCount = Annotated[int | None, BeforeValidator(_whole)]
MaybeText = Annotated[str | None, BeforeValidator(_text)]
Probability = Annotated[float, BeforeValidator(_finite), Field(ge=0.0)]
ProbabilityTable = Annotated[dict[str, Probability], Field(min_length=1)]
_PROBABILITY_TABLE: TypeAdapter[dict[str, float]] = TypeAdapter(ProbabilityTable)


def _probabilities(fields: dict[str, Any], keys: tuple[str, ...]) -> dict[str, float] | None:
    for key in keys:
        try:
            return _PROBABILITY_TABLE.validate_python(fields.get(key))
        except ValidationError:
            continue
    return None


def parse_rows(validate: Callable[[Any], T], rows: Iterable[jsonl.Row]) -> tuple[list[T], int]:
    """The rows `validate` (a model's `model_validate`) accepts, in order, and how many it refused."""
    good: list[T] = []
    bad = 0
    for row in rows:
        try:
            good.append(validate(row))
        except ValidationError:
            bad += 1
    return good, bad


class _Line(BaseModel):
    """A JSONL line's model: keys it does not name are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)


class _Record(BaseModel):
    """A record written from its model: keys it does not name are ignored on reading."""

    model_config = ConfigDict(extra="ignore", frozen=True, allow_inf_nan=False)


# -- a weights folder ---------------------------------------------------------------------------------------


class RoundCounter(_Record):
    """`round_counter.json`: the rounds the bot has saved, rewritten atomically after each (`time`: when, in
    seconds since the epoch). A campaign watches it for liveness."""

    rounds: int = Field(strict=True, ge=0)
    time: float | None = None


def read_round_counter(path: Path) -> int | None:
    """The saved rounds; None when the file is missing, unreadable or not a round counter."""
    try:
        return RoundCounter.model_validate_json(path.read_bytes()).rounds
    except (OSError, ValueError):  # a ValidationError is a ValueError
        return None


def write_round_counter(path: Path, rounds: int, now: float) -> None:
    from sacbot.checkpoint.atomic import atomic_write_json

    atomic_write_json(path, RoundCounter(rounds=rounds, time=now).model_dump())


class RoundLine(_Line):
    """A line of `rounds.jsonl`: one round.

    `sacbot play` writes round_total, opponent, window_score_share (own / (own + enemy) over the best slot's
    window of recent rounds, not this round's own share), best_stored and the round as the realtime thread
    saw it (round, outcome, reward_sum, turns, skipped_turns, tick_to_intent_p50/p99/max_ms,
    dropped_transitions, own_score, enemy_score); train-fast writes written_by, round_total, reward_sum and
    the environment's round result (opponent, outcome, score, opponent_score, ...).
    """

    time: MaybeNumber = None
    round_total: MaybeCount = None
    opponent: MaybeText = None
    outcome: MaybeText = None  # won, lost, draw, survived; train-fast's truncated rounds: truncated
    reward_sum: MaybeNumber = None
    turns: MaybeCount = None
    skipped_turns: MaybeCount = None
    tick_to_intent_p99_ms: MaybeNumber = None
    tick_to_intent_max_ms: MaybeNumber = None
    dropped_transitions: MaybeCount = None
    own_score: MaybeNumber = None  # sacbot play
    enemy_score: MaybeNumber = None
    score: MaybeNumber = None  # train-fast (None: a truncated round)
    opponent_score: MaybeNumber = None
    written_by: MaybeText = None

    @property
    def own(self) -> float | None:
        """The bot's round score, whoever wrote the line."""
        return self.own_score if self.own_score is not None else self.score

    @property
    def enemy(self) -> float | None:
        return self.enemy_score if self.enemy_score is not None else self.opponent_score


def read_round_tail(path: Path, max_bytes: int) -> list[RoundLine]:
    """The rounds among the last `max_bytes` of a `rounds.jsonl` (to refill a window of recent rounds)."""
    return parse_rows(RoundLine.model_validate, jsonl.tail(path, max_bytes))[0]


class MetricsLine(_Line):
    """A line of `training_metrics.jsonl`: `sacbot play`'s train pass at each round end (with `epoch`, the
    round total), or train-fast's save (`written_by`). The losses are null in a pass without updates."""

    time: Number
    env_steps: Count
    updates: MaybeCount = None
    critic_loss: MaybeNumber = None
    qf1_loss: MaybeNumber = None
    qf2_loss: MaybeNumber = None
    actor_loss: MaybeNumber = None
    alpha_loss: MaybeNumber = None
    kickstart_loss: MaybeNumber = None
    self_imitation_loss: MaybeNumber = None
    hindsight_aim_loss: MaybeNumber = None
    anchor_loss: MaybeNumber = None
    alpha: MaybeNumber = None
    replay_size: MaybeCount = None
    written_by: MaybeText = None

    def losses(self) -> dict[str, float]:
        """Every loss the line holds (the named ones and any other `*loss*` key), by key."""
        numbers = ((key, _finite(value)) for key, value in self if "loss" in key)
        return {key: number for key, number in numbers if number is not None}


class LeaguePoolLine(_Line):
    """train-fast's `league.jsonl` at every save: the pool's draw probabilities (`pool`, name ->
    probability), win rates, rounds and games per opponent, the snapshots in the pool."""

    event: Literal["pool"]
    env_steps: Count
    time: MaybeNumber = None
    pool: ProbabilityTable


class LeagueSnapshotLine(_Line):
    """train-fast's `league.jsonl` when a snapshot joins the pool: its `name`, the pool, the ones removed."""

    event: Literal["snapshot"]
    env_steps: Count
    time: MaybeNumber = None
    name: MaybeText = None


LeagueLine = Annotated[LeaguePoolLine | LeagueSnapshotLine, Field(discriminator="event")]
LEAGUE_LINE: TypeAdapter[LeaguePoolLine | LeagueSnapshotLine] = TypeAdapter(LeagueLine)


# -- a campaign run folder ----------------------------------------------------------------------------------


class CampaignEvent(_Line):
    """A line of `campaign_log.jsonl`: what the campaign did (`event`) and when (`time`, seconds since the
    epoch). The other fields depend on the event (`sacbot.campaign.loop` writes them); those read back are
    named here: `start` (campaign, seed, budget, completed), `chunk_start`/`chunk_done` (chunk, attempt,
    opponent; chunk_done also rounds, wins, win_rate, score_share, seconds), `chunk_failed`/`gave_up` (what,
    chunk, attempt, reason), `eval_done` (chunk, composite, best, promoted), `promoted` (chunk, composite),
    `league_draw` (chunk, opponent, pool: name -> probability, ...), `snapshot` (chunk, name, pool: names)."""

    event: str
    time: Number
    campaign: MaybeText = None
    seed: MaybeCount = None
    budget: MaybeCount = None
    chunk: MaybeCount = None
    opponent: MaybeText = None
    rounds: MaybeCount = None
    wins: MaybeCount = None
    composite: MaybeNumber = None
    best: MaybeNumber = None
    name: MaybeText = None

    def probabilities(self) -> dict[str, float] | None:
        """A `league_draw`'s name -> draw probability (its `pool` table), else None."""
        return _probabilities(self.model_extra or {}, ("probabilities", "pool"))


def append_event(path: Path, event: dict[str, Any]) -> None:
    """One line of the campaign log (NaN and infinities refused), fsynced."""
    jsonl.append(path, event, allow_nan=False)


def read_events(path: Path) -> list[CampaignEvent]:
    """The campaign log's events; a line torn by a kill, or foreign, is skipped."""
    return parse_rows(CampaignEvent.model_validate, jsonl.read(path).rows)[0]


class EvalRecord(_Record):
    """A line of `eval_log.jsonl`: one eval game of the policy against one opponent after chunk `chunk`."""

    opponent: str
    rounds: int
    wins: int
    win_rate: float
    score_share: float
    chunk: int
    time: float
    bullet_damage: float = 0.0


def eval_history(rows: Iterable[jsonl.Row]) -> tuple[list[EvalRecord], int]:
    """Eval lines as records, keeping the last line per (opponent, chunk) (an eval rerun after a crash
    replaces its partial first try instead of counting twice), in the order of those lines; and how many
    lines were refused."""
    records, bad = parse_rows(EvalRecord.model_validate, rows)
    latest: dict[tuple[str, int], EvalRecord] = {}
    for rec in records:
        latest.pop((rec.opponent, rec.chunk), None)  # re-insert so order follows the newest line
        latest[(rec.opponent, rec.chunk)] = rec
    return list(latest.values()), bad


def read_eval_log(path: Path) -> list[EvalRecord]:
    return eval_history(jsonl.read(path).rows)[0]


def append_eval(path: Path, record: EvalRecord) -> None:
    jsonl.append(path, record.model_dump(), allow_nan=False)


class BestScore(_Record):
    """`best_score.json`: the global best's composite score, what it measures (the gate's score kind), the
    chunk whose candidate it was, and when it was promoted (UTC, ISO 8601). A mirror for people: best.zip's
    own metadata is the truth."""

    score: float
    kind: str | None = None
    chunk: int | None = None
    time: str | None = None


def write_best_score(paths: RunPaths, best: BestScore) -> None:
    """Replace the mirror atomically; an older run's text mirror goes (the JSON one now speaks for it)."""
    from sacbot.checkpoint.atomic import atomic_write_text

    atomic_write_text(paths.best_score, best.model_dump_json(indent=2) + "\n")
    paths.legacy_best_score.unlink(missing_ok=True)


def read_best_score(paths: RunPaths) -> BestScore | None:
    """The run folder's best score: `best_score.json`, else an older run's text mirror `best_score`
    (`<score> <kind> chunk <n> <time>`); None when neither is there or readable as one. A file that exists
    but cannot be read is a `UserError`."""
    text = jsonl.read_text(paths.best_score)
    if text is not None:
        try:
            return BestScore.model_validate_json(text)
        except ValueError:
            return None
    text = jsonl.read_text(paths.legacy_best_score)
    return None if text is None else _legacy_best_score(text)


def _legacy_best_score(text: str) -> BestScore | None:
    parts = text.split()
    chunked = len(parts) > 3 and parts[2] == "chunk" and parts[3].isdigit()
    fields = {
        "score": parts[0] if parts else None,
        "kind": parts[1] if len(parts) > 1 else None,
        "chunk": parts[3] if chunked else None,
        "time": parts[4] if chunked and len(parts) > 4 else None,
    }
    try:
        return BestScore.model_validate(fields)  # a number's text is a number here (lax mode)
    except ValidationError:
        return None
