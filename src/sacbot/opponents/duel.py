"""`DuelBot`: what the advanced opponents are written on: one decision per turn, gun and radar free.

The classic samples are scripts of blocking moves (`ClassicBot`); strong Robocode bots are not. They decide
every turn from what they track: the enemy's last scan, its turn rate and lateral speed, its energy drops (a
drop of 0.1-3 that no hit explains is a shot), and the bullet waves those shots make. `DuelBot` keeps that
record from the wire events alone (what a real bot receives), locks its radar on the enemy, and sends one
complete intent per turn with the gun and radar turning independently of the body (the adjust flags on).
Subclasses write `act()`, using the helpers below to move (`drive`, `wall_smooth`, `orbit_angle`) and to shoot
(`circular_aim`, `aim_fire`).

The statistics of the learning parts (`GuessFactorGun` in `sacbot.opponents.guess_factor`, `Surfer`'s danger
bins) live in the policy object and carry over from round to round within a game; a new object (one per game
in the environment) starts afresh. Randomness comes only from `self.rng`, seeded at construction, so engine
games are reproducible.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sacbot.engine.rules import calc_bullet_speed
from sacbot.opponents.base import ClassicBot
from sacbot.opponents.motion import MAX_SPEED, direction_to, normalize_relative
from sacbot.opponents.waves import Wave
from sacbot.protocol import BotIntent, TickEventForBot

BOT_RADIUS = 18.0
WALL_STICK = 140.0  # how far ahead wall smoothing looks
WALL_MARGIN = 22.0  # the smoothed path keeps this far inside the walls (plus the bot's radius)


def project(x: float, y: float, angle: float, distance: float) -> tuple[float, float]:
    rad = math.radians(angle)
    return x + distance * math.cos(rad), y + distance * math.sin(rad)


@dataclass
class Enemy:
    """The enemy as the last scans showed it."""

    x: float = 0.0
    y: float = 0.0
    heading: float = 0.0
    speed: float = 0.0
    energy: float = 100.0
    turn_rate: float = 0.0  # degrees per turn, from the last two scans
    seen_turn: int = -1000


def steer(direction: float, angle: float, speed: float) -> tuple[float, float]:
    """(target speed, turn rate) to head along `angle`, forwards or backwards, whichever needs less turning;
    slower in sharp turns so the turn rate (10 - 0.75|v|) can follow."""
    delta = normalize_relative(angle - direction)
    if abs(delta) > 90.0:
        delta = normalize_relative(delta + 180.0)
        speed = -speed
    return (speed if abs(delta) < 40.0 else speed * 0.5), max(-10.0, min(10.0, delta))


class DuelBot(ClassicBot):
    """A per-turn bot for duels: enemy tracking, energy-drop shot detection, radar lock, movement and aim."""

    name = "DuelBot"

    enemy: Enemy
    enemy_waves: list[Wave]

    def on_new_round(self) -> None:
        self.enemy = Enemy()
        self.enemy_waves = []  # shots the enemy fired at us, from its energy drops
        self.fresh_scan = False
        self.enemy_fired = 0.0  # power of the shot detected this turn, 0 when none
        self.lateral_direction = 1.0
        self._radar_sign = 1.0
        self._hit_damage = 0.0  # damage our bullets did to the enemy this turn (explains its energy drop)
        self._gain = 0.0  # energy the enemy gained this turn from hitting us
        self._rammed = False
        # Our own pose when we sent the last intent: an enemy shot seen this turn was aimed at it.
        self._last_x = self._last_y = self._last_v = self._last_heading = 0.0
        self._out_turn = 0.0
        self._out_speed = 0.0
        self._out_gun = 0.0
        self._out_radar = 0.0
        self._out_fire = 0.0
        self.on_duel_round()

    def on_duel_round(self) -> None:
        """Reset a subclass's per-round fields."""

    # -- the per-turn loop ---------------------------------------------------------------------------------

    def on_tick(self, tick: TickEventForBot) -> BotIntent:
        self.take_state(tick)
        self.fresh_scan = False
        self.enemy_fired = 0.0
        self._hit_damage = self._gain = 0.0
        self._rammed = False
        # The server sends a tick's events in no set order: take the hits and collisions that explain an
        # energy change first, then the scan that shows it.
        scans = []
        for e in tick.events:
            if e.type == "ScannedBotEvent":
                scans.append(e)
            else:
                self._take(e)
        for e in scans:
            self._take(e)
        self._out_turn = self._out_speed = self._out_gun = self._out_fire = 0.0
        self._out_radar = self._radar()
        if self.energy > 0.0:
            self.act()
        return self._duel_intent()

    def _take(self, e: Any) -> None:
        kind = e.type
        if kind == "ScannedBotEvent":
            if e.scanned_by_bot_id == self.my_id or not self.my_id:
                self._scanned(e)
        elif kind == "BulletHitBotEvent":
            bullet = e.bullet
            if e.victim_id == self.my_id:
                self._gain += 3.0 * bullet.power
                self.on_hit_by(bullet.x, bullet.y, bullet.power)
            elif bullet.owner_id == self.my_id:
                self._hit_damage += e.damage
        elif kind == "BulletHitBulletEvent":
            for bullet in (e.bullet, e.hit_bullet):
                if bullet.owner_id != self.my_id:
                    self.on_hit_by(bullet.x, bullet.y, bullet.power)
        elif kind == "BotHitBotEvent":
            self._rammed = True
        elif kind == "BotHitWallEvent":
            self.on_wall()
        elif kind == "WonRoundEvent":
            self.won_this_round = True

    def _scanned(self, e: Any) -> None:
        en = self.enemy
        x, y = e.x, e.y
        heading, speed, energy = e.direction, e.speed, e.energy
        gap = self.turn_number - en.seen_turn
        if 0 < gap <= 3:
            en.turn_rate = max(-10.0, min(10.0, normalize_relative(heading - en.heading) / gap))
            drop = en.energy - energy + self._gain - self._hit_damage - (0.6 if self._rammed else 0.0)
            # A wall hit costs max(|v|/2 - 1, 0): a stop from speed far from the walls is no wall hit.
            if en.speed != 0.0 and speed == 0.0 and self._near_wall(x, y, 2.0):
                drop -= max(abs(en.speed) / 2.0 - 1.0, 0.0)
            if 0.0999 < drop <= 3.0001:
                self._enemy_shot(min(3.0, drop), en.x, en.y)
        else:
            en.turn_rate = 0.0
        en.x, en.y, en.heading, en.speed, en.energy = x, y, heading, speed, energy
        en.seen_turn = self.turn_number
        self.fresh_scan = True
        lateral = speed * math.sin(math.radians(heading - self.direction_to(x, y)))
        if lateral > 0.5:
            self.lateral_direction = 1.0
        elif lateral < -0.5:
            self.lateral_direction = -1.0

    def _enemy_shot(self, power: float, x: float, y: float) -> None:
        self.enemy_fired = power
        # The shot left from the enemy's pre-move position, aimed at where we were before this turn's move.
        bearing = direction_to(x, y, self._last_x, self._last_y)
        lateral = self._last_v * math.sin(math.radians(self._last_heading - bearing))
        direction = 1.0 if lateral >= 0.0 else -1.0
        self.enemy_waves.append(
            Wave(x, y, self.turn_number, calc_bullet_speed(power), bearing, direction, 0, power)
        )

    def _near_wall(self, x: float, y: float, slack: float) -> bool:
        r = BOT_RADIUS + slack
        return x <= r or y <= r or x >= self.arena_width - r or y >= self.arena_height - r

    def _radar(self) -> float:
        en = self.enemy
        if self.turn_number - en.seen_turn <= 1:
            bearing = direction_to(self.x, self.y, en.x, en.y)
            delta = normalize_relative(bearing - self.radar_direction)
            width = math.degrees(math.atan2(BOT_RADIUS * 2.0, max(self.distance_to(en.x, en.y), 1.0)))
            self._radar_sign = 1.0 if delta >= 0.0 else -1.0
            return max(-45.0, min(45.0, delta + self._radar_sign * width))
        return self._radar_sign * 45.0

    def _duel_intent(self) -> BotIntent:
        self._last_x, self._last_y, self._last_v, self._last_heading = (
            self.x,
            self.y,
            self.speed,
            self.direction,
        )
        intent = BotIntent(
            turn_rate=self._out_turn,
            gun_turn_rate=self._out_gun,
            radar_turn_rate=self._out_radar,
            target_speed=self._out_speed,
            firepower=self._out_fire,
            adjust_gun_for_body_turn=True,
            adjust_radar_for_body_turn=True,
            adjust_radar_for_gun_turn=True,
            rescan=False,
            fire_assist=False,
        )
        return self.with_colors(intent)

    # -- what subclasses write ----------------------------------------------------------------------------

    def act(self) -> None:
        """Decide this turn: call `drive`/`set_speed_turn` and `aim_fire`; the radar is already locked."""

    def on_hit_by(self, x: float, y: float, power: float) -> None:
        """An enemy bullet hit us (or one of our bullets) at (x, y)."""

    def on_wall(self) -> None:
        """We hit a wall."""

    # -- helpers: state --------------------------------------------------------------------------------------

    @property
    def seen(self) -> bool:
        return self.enemy.seen_turn >= 0 and self.turn_number - self.enemy.seen_turn < 30

    def enemy_distance(self) -> float:
        return self.distance_to(self.enemy.x, self.enemy.y)

    def enemy_bearing(self) -> float:
        return self.direction_to(self.enemy.x, self.enemy.y)

    def enemy_lateral_speed(self) -> float:
        en = self.enemy
        return en.speed * math.sin(math.radians(en.heading - self.enemy_bearing()))

    # -- helpers: movement -----------------------------------------------------------------------------------

    def in_field(self, x: float, y: float, margin: float = WALL_MARGIN) -> bool:
        m = BOT_RADIUS + margin
        return m <= x <= self.arena_width - m and m <= y <= self.arena_height - m

    def wall_smooth(
        self, x: float, y: float, angle: float, orientation: float, stick: float = WALL_STICK
    ) -> float:
        """Turn `angle` toward `orientation` (+1 left / -1 right) until `stick` ahead of (x, y) is inside."""
        for _ in range(36):
            px, py = project(x, y, angle, stick)
            if self.in_field(px, py):
                return angle % 360.0
            angle += 5.0 * orientation
        return direction_to(x, y, self.arena_width / 2.0, self.arena_height / 2.0)

    def orbit_angle(
        self,
        x: float,
        y: float,
        orientation: float,
        distance: float,
        preferred: float,
        centre: tuple[float, float] | None = None,
    ) -> float:
        """Perpendicular to the enemy (or `centre`), `orientation` +1 counter-clockwise around it, tilted to
        hold `preferred` distance."""
        cx, cy = (self.enemy.x, self.enemy.y) if centre is None else centre
        away = direction_to(cx, cy, x, y)
        tilt = max(-35.0, min(35.0, (preferred - distance) * 0.12))  # too close: tilt away
        return away + orientation * (90.0 - tilt)

    def drive(self, angle: float, speed: float = MAX_SPEED) -> None:
        """Head along absolute `angle` at `speed`, forwards or backwards, whichever needs less turning."""
        self._out_speed, self._out_turn = steer(self.direction, angle, speed)

    def set_speed_turn(self, speed: float, turn: float) -> None:
        self._out_speed, self._out_turn = speed, turn

    # -- helpers: gun ---------------------------------------------------------------------------------------

    def power_for(self, distance: float) -> float:
        """Strong close, light far, little when low on energy, never more than the enemy has left."""
        power = 3.0 if distance < 150.0 else (2.2 if distance < 350.0 else 1.6)
        if self.energy < 20.0:
            power = min(power, self.energy / 8.0)
        kill = self.enemy.energy / 4.0 + 0.1
        return max(0.1, min(power, kill, 3.0))

    def circular_aim(self, power: float, turn_rate: float | None = None) -> float:
        """The absolute angle to where the enemy will be, going on at its speed and turn rate (0: linear)."""
        en = self.enemy
        rate = en.turn_rate if turn_rate is None else turn_rate
        v = calc_bullet_speed(power)
        ex, ey, heading = en.x, en.y, en.heading
        w, h = self.arena_width, self.arena_height
        ox, oy = self.x, self.y  # a shot leaves from where we are now, before the next move
        elapsed = self.turn_number - en.seen_turn
        for t in range(1, 120):
            heading += rate
            ex, ey = project(ex, ey, heading, en.speed)
            ex = max(BOT_RADIUS, min(w - BOT_RADIUS, ex))
            ey = max(BOT_RADIUS, min(h - BOT_RADIUS, ey))
            if v * max(0, t - elapsed) >= math.hypot(ex - ox, ey - oy) - BOT_RADIUS / 2.0:
                break
        return direction_to(ox, oy, ex, ey)

    def aim_fire(self, angle: float, power: float) -> None:
        """Turn the gun toward `angle`; fire now if it already points there (a shot leaves along the gun's
        heading before this turn's gun turn)."""
        error = normalize_relative(angle - self.gun_direction)
        self._out_gun = max(-20.0, min(20.0, error))
        distance = max(self.enemy_distance(), 1.0)
        tolerance = math.degrees(math.atan2(BOT_RADIUS * 0.8, distance))
        if self.gun_heat == 0.0 and abs(error) <= tolerance and self.energy > power + 0.1 and self.seen:
            self._out_fire = power


__all__ = [
    "DuelBot",
    "Enemy",
]
