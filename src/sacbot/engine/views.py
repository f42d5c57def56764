"""Protocol views of the engine state: ticks for bots and observers, and results (`TurnToTickEventFor*Mapper`,
`BotToBotStateMapper`, `ResultsBuilder`, `score/ResultsView.kt`). Built only on demand."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sacbot.engine import events as ev
from sacbot.engine.scoring import Score, rank_scores, round_half_up
from sacbot.engine.state import Bot
from sacbot.protocol import (
    BotState,
    BotStateWithId,
    BulletState,
    ResultsForBot,
    ResultsForObserver,
    TickEventForBot,
    TickEventForObserver,
    to_dict,
)

if TYPE_CHECKING:
    from sacbot.engine.game import Game


_NO_COLORS: tuple[str | None, ...] = (None,) * 7


def _colors(bot: Bot) -> tuple[str | None, ...]:
    """The bot's seven colors (body, turret, radar, bullet, scan, tracks, gun) from its persistent intent."""
    i = bot.intent
    if i is None:
        return _NO_COLORS
    return (
        i.body_color,
        i.turret_color,
        i.radar_color,
        i.bullet_color,
        i.scan_color,
        i.tracks_color,
        i.gun_color,
    )


def bot_state(bot: Bot, enemy_count: int) -> BotState:
    body, turret, radar, bullet, scan, tracks, gun = _colors(bot)
    return BotState(
        energy=bot.energy,
        x=bot.x,
        y=bot.y,
        direction=bot.direction,
        gun_direction=bot.gun_direction,
        radar_direction=bot.radar_direction,
        radar_sweep=bot.radar_sweep,
        speed=bot.speed,
        turn_rate=bot.turn_rate,
        gun_turn_rate=bot.gun_turn_rate,
        radar_turn_rate=bot.radar_turn_rate,
        gun_heat=bot.gun_heat,
        enemy_count=enemy_count,
        is_droid=bot.is_droid,
        body_color=body,
        turret_color=turret,
        radar_color=radar,
        bullet_color=bullet,
        scan_color=scan,
        tracks_color=tracks,
        gun_color=gun,
    )


def tick_for_bot(game: Game, bot: Bot, events: list[tuple[Any, ...]]) -> TickEventForBot:
    turn = game.turn_number
    bot_id = bot.id
    return TickEventForBot(
        turn_number=turn,
        round_number=game.round_number,
        bot_state=bot_state(bot, game.enemy_count(bot_id)),
        bullet_states=[
            BulletState(
                bullet_id=b.bullet_id,
                owner_id=b.owner_id,
                power=b.power,
                x=b.x,
                y=b.y,
                direction=b.direction,
                color=b.color,
            )
            for b in game.bullets
            if b.owner_id == bot_id
        ],  # fmt: skip
        events=[ev.to_protocol(e, turn) for e in events],
    )


def tick_for_observer(game: Game, bots: list[Bot], events: list[tuple[Any, ...]]) -> TickEventForObserver:
    turn = game.turn_number
    states = []
    for bot in bots:
        p = game.participant(bot.id)
        body, turret, radar, bullet, scan, tracks, gun = _colors(bot)
        states.append(
            BotStateWithId(
                id=bot.id,
                session_id=p.session_id,
                name=p.name,
                version=p.version,
                energy=bot.energy,
                x=bot.x,
                y=bot.y,
                direction=bot.direction,
                gun_direction=bot.gun_direction,
                radar_direction=bot.radar_direction,
                radar_sweep=bot.radar_sweep,
                speed=bot.speed,
                turn_rate=bot.turn_rate,
                gun_turn_rate=bot.gun_turn_rate,
                radar_turn_rate=bot.radar_turn_rate,
                gun_heat=bot.gun_heat,
                enemy_count=game.enemy_count(bot.id),
                is_droid=bot.is_droid,
                std_out=bot.std_out,
                std_err=bot.std_err,
                debug_graphics=bot.debug_graphics,
                body_color=body,
                turret_color=turret,
                radar_color=radar,
                bullet_color=bullet,
                scan_color=scan,
                tracks_color=tracks,
                gun_color=gun,
            )
        )
    return TickEventForObserver(
        turn_number=turn,
        round_number=game.round_number,
        bot_states=states,
        bullet_states=[
            BulletState(
                bullet_id=b.bullet_id,
                owner_id=b.owner_id,
                power=b.power,
                x=b.x,
                y=b.y,
                direction=b.direction,
                color=b.color,
            )
            for b in game.bullets
        ],  # fmt: skip
        events=[ev.to_protocol(e, turn) for e in events],
    )


# ---- Wire dicts: the same JSON objects as `to_dict(tick_for_*(...))` (same keys, same order, nulls left
# out), built straight from the engine state without the dataclasses in between. The arena encodes ticks this
# way on every turn; tests check both paths give the same text.

_COLOR_KEYS = (
    "bodyColor",
    "turretColor",
    "radarColor",
    "bulletColor",
    "scanColor",
    "tracksColor",
    "gunColor",
)


def _bullet_dict(b: Any) -> dict[str, Any]:
    d = {"bulletId": b.bullet_id, "ownerId": b.owner_id, "power": b.power, "x": b.x, "y": b.y,
         "direction": b.direction}  # fmt: skip
    if b.color is not None:
        d["color"] = b.color
    return d


def _snap_dict(snap: tuple[Any, ...]) -> dict[str, Any]:
    d = {"bulletId": snap[0], "ownerId": snap[1], "power": snap[2], "x": snap[3], "y": snap[4],
         "direction": snap[5]}  # fmt: skip
    if snap[6] is not None:
        d["color"] = snap[6]
    return d


def _event_dict(e: tuple[Any, ...], turn: int) -> dict[str, Any]:
    kind = e[0]
    if kind == ev.SCANNED:
        return {"type": "ScannedBotEvent", "turnNumber": turn, "scannedByBotId": e[1], "scannedBotId": e[2],
                "energy": e[3], "x": e[4], "y": e[5], "direction": e[6], "speed": e[7]}  # fmt: skip
    if kind == ev.BULLET_FIRED:
        return {"type": "BulletFiredEvent", "turnNumber": turn, "bullet": _snap_dict(e[1])}
    if kind == ev.BULLET_HIT_WALL:
        return {"type": "BulletHitWallEvent", "turnNumber": turn, "bullet": _snap_dict(e[1])}
    if kind == ev.BOT_HIT_WALL:
        return {"type": "BotHitWallEvent", "turnNumber": turn, "victimId": e[1]}
    return to_dict(ev.to_protocol(e, turn))  # the rarer kinds: through the protocol object


def _state_dict(bot: Bot, enemy_count: int) -> dict[str, Any]:
    # One dict display (much cheaper than item by item); is_droid is always a bool in the engine.
    d: dict[str, Any] = {
        "isDroid": bot.is_droid,
        "energy": bot.energy,
        "x": bot.x,
        "y": bot.y,
        "direction": bot.direction,
        "gunDirection": bot.gun_direction,
        "radarDirection": bot.radar_direction,
        "radarSweep": bot.radar_sweep,
        "speed": bot.speed,
        "turnRate": bot.turn_rate,
        "gunTurnRate": bot.gun_turn_rate,
        "radarTurnRate": bot.radar_turn_rate,
        "gunHeat": bot.gun_heat,
        "enemyCount": enemy_count,
    }
    if bot.is_droid is None:
        del d["isDroid"]
    colors = _colors(bot)
    if colors != _NO_COLORS:  # most bots never paint themselves
        for key, color in zip(_COLOR_KEYS, colors, strict=True):
            if color is not None:
                d[key] = color
    return d


def tick_for_bot_dict(game: Game, bot: Bot, events: list[tuple[Any, ...]]) -> dict[str, Any]:
    """`to_dict(tick_for_bot(game, bot, events))`, built directly."""
    turn = game.turn_number
    bot_id = bot.id
    state = _state_dict(bot, game.enemy_count(bot_id))
    return {
        "type": "TickEventForBot",
        "turnNumber": turn,
        "roundNumber": game.round_number,
        "botState": state,
        "bulletStates": [_bullet_dict(b) for b in game.bullets if b.owner_id == bot_id],
        "events": [_event_dict(e, turn) for e in events],
    }


def tick_for_observer_dict(game: Game, bots: list[Bot], events: list[tuple[Any, ...]]) -> dict[str, Any]:
    """`to_dict(tick_for_observer(game, bots, events))`, built directly."""
    turn = game.turn_number
    states = []
    for bot in bots:
        p = game.participant(bot.id)
        d = _state_dict(bot, game.enemy_count(bot.id))
        d["id"] = bot.id
        if p.session_id is not None:
            d["sessionId"] = p.session_id
        if p.name is not None:
            d["name"] = p.name
        if p.version is not None:
            d["version"] = p.version
        if bot.std_out is not None:
            d["stdOut"] = bot.std_out
        if bot.std_err is not None:
            d["stdErr"] = bot.std_err
        if bot.debug_graphics is not None:
            d["debugGraphics"] = bot.debug_graphics
        states.append(d)
    return {
        "type": "TickEventForObserver",
        "turnNumber": turn,
        "roundNumber": game.round_number,
        "botStates": states,
        "bulletStates": [_bullet_dict(b) for b in game.bullets],
        "events": [_event_dict(e, turn) for e in events],
    }


def _result_fields(s: Score) -> dict[str, int]:
    """Integers as the server rounds them: half up, except the bullet kill bonus, which is truncated."""
    return {
        "rank": s.rank,
        "survival": round_half_up(s.survival),
        "last_survivor_bonus": round_half_up(s.last_survivor_bonus),
        "bullet_damage": round_half_up(s.bullet_damage),
        "bullet_kill_bonus": int(s.bullet_kill_bonus),
        "ram_damage": round_half_up(s.ram_damage),
        "ram_kill_bonus": round_half_up(s.ram_kill_bonus),
        "total_score": round_half_up(s.total),
        "first_places": s.first_places,
        "second_places": s.second_places,
        "third_places": s.third_places,
    }


def bot_results(scores: dict[int, Score], bot_id: int) -> ResultsForBot:
    """A bot's results with its shared rank among all bots (1.1.0 keeps round 1's order instead)."""
    ranked = rank_scores([s.copy() for s in scores.values()])
    mine = next(s for s in ranked if s.bot_id == bot_id)
    return ResultsForBot(**_result_fields(mine))


def observer_results(game: Game, scores: list[Score]) -> list[ResultsForObserver]:
    """One row per bot, or per team (members summed, id = team id), sorted by total then id, ranked."""
    rows: dict[tuple[bool, int], Score] = {}
    for s in sorted(scores, key=lambda s: s.bot_id):
        p = game.participant(s.bot_id)
        key = (p.team_id is not None, p.team_id if p.team_id is not None else p.id)
        if key in rows:
            rows[key].accumulate(s)
        else:
            rows[key] = s.copy(bot_id=key[1])
    team_of = {key[1]: key[0] for key in rows}
    ranked = rank_scores(sorted(rows.values(), key=lambda s: s.bot_id))
    out = []
    for s in ranked:
        is_team = team_of[s.bot_id]
        if is_team:
            member = next(p for p in game.participants if p.team_id == s.bot_id)
            name = member.team_name or f"Team {s.bot_id}"
            version = member.team_version or member.version
        else:
            member = game.participant(s.bot_id)
            name = member.name
            version = member.version
        out.append(
            ResultsForObserver(id=s.bot_id, name=name, version=version, is_team=is_team, **_result_fields(s))
        )
    return out
