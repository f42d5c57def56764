"""Drawing one tick of a `Scene` with Pillow as the web page draws it (`Painter`, from the rules in
`static/style.json`), and the colour helpers it shares with the clip writer."""

from __future__ import annotations

import colorsys
import math
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from sacbot.viewer.pages import style as load_style
from sacbot.viewer.scene import Scene

RGB = tuple[int, int, int]
RGBA = tuple[int, int, int, int]
Point = tuple[float, float]
SUPERSAMPLE = 2  # drawn at twice the size, then scaled down: smooth edges without an antialiasing renderer


@lru_cache(maxsize=256)
def parse_color(text: str) -> RGB:
    h = text.strip().lstrip("#")
    if len(h) == 3:
        h = "".join(c + c for c in h)
    try:
        n = int(h[:6], 16)
    except ValueError:
        return (255, 255, 255)
    if len(h) < 6:
        return (255, 255, 255)
    return ((n >> 16) & 255, (n >> 8) & 255, n & 255)


def _hls(rgb: RGB) -> tuple[float, float, float]:
    return colorsys.rgb_to_hls(rgb[0] / 255, rgb[1] / 255, rgb[2] / 255)


def _rgb(h: float, l: float, s: float) -> RGB:  # noqa: E741 - hue, lightness, saturation
    r, g, b = colorsys.hls_to_rgb(h, l, s)
    return (round(r * 255), round(g * 255), round(b * 255))


def shade(rgb: RGB, add: float = 0.0, mult: float = 1.0) -> RGB:
    """Lightness plus `add`, times `mult` (the official GUI's HSL adjustments)."""
    h, l, s = _hls(rgb)  # noqa: E741
    return _rgb(h, min(1.0, max(0.0, (l + add) * mult)), s)


def mulberry32(seed: int) -> Iterator[float]:
    """The page's explosion randomness, number for number (viewer.js `mulberry32`)."""
    a = seed & 0xFFFFFFFF
    while True:
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = a
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        yield ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296


class Painter:
    """Draws one tick of a scene into a Pillow image `width` pixels wide."""

    def __init__(
        self, scene: Scene, width: int, rules: dict[str, Any] | None = None, *, scans: bool = True
    ) -> None:
        self.scene = scene
        self.scans = scans
        self.S = rules or load_style()
        S = self.S
        self.W = float(scene.setup["arenaWidth"])
        self.H = float(scene.setup["arenaHeight"])
        pad = S["canvas"]["padding"]
        self.width = max(64, int(width) // 2 * 2)  # even sizes, as video encoders want
        self.height = max(48, math.ceil(self.width * (self.H + 2 * pad) / self.W / 2) * 2)
        self.k = min(self.width / self.W, self.height / (self.H + 2 * pad))
        self.ss = SUPERSAMPLE
        k = self.k * self.ss
        self.kss = k
        self.ox = self.width * self.ss / 2 - self.W / 2 * k
        self.oy = self.height * self.ss / 2 + self.H / 2 * k
        self._fonts: dict[int, ImageFont.FreeTypeFont | ImageFont.ImageFont] = {}

    # ---- coordinates ------------------------------------------------------------------------------------

    def to_px(self, x: float, y: float) -> Point:
        """Arena (y up) to supersampled pixels (y down)."""
        return (self.ox + x * self.kss, self.oy - y * self.kss)

    def _shape(self, pts: Sequence[Point], x: float, y: float, angle: float) -> list[Point]:
        """Design-unit points of a tank part, turned by `angle` degrees and placed at arena (x, y)."""
        T = self.S["tank"]
        s = T["size"] / T["units"]
        c, n = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        return [self.to_px(x + (px * c - py * n) * s, y + (px * n + py * c) * s) for px, py in pts]

    @staticmethod
    def _rect(r: Sequence[float]) -> list[Point]:
        x, y, w, h = r
        return [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]

    def _font(self, px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
        font = self._fonts.get(px)
        if font is None:
            font = self._fonts[px] = ImageFont.load_default(size=px)
        return font

    def _color(self, value: str | None, key: str) -> RGB:
        return parse_color(value or self.S["defaults"][key])

    def _visible(self, rgb: RGB) -> RGB:
        floor = self.S["visibleDarkLightness"]
        h, l, s = _hls(rgb)  # noqa: E741
        return _rgb(h, floor, s) if l < floor else rgb

    def _border(self, rgb: RGB) -> RGB:
        dark = _hls(rgb)[1] < self.S["darkBorderLightness"]
        return parse_color(self.S["darkBorder"] if dark else self.S["border"])

    # ---- a frame ----------------------------------------------------------------------------------------

    def paint(self, index: int, mode: str = "REPLAY") -> Image.Image:
        S = self.S
        size = (self.width * self.ss, self.height * self.ss)
        img = Image.new("RGB", size, parse_color(S["canvas"]["background"]))
        d = ImageDraw.Draw(img, "RGBA")
        x0, y1 = self.to_px(0, 0)
        x1, y0 = self.to_px(self.W, self.H)
        d.rectangle((x0, y0, x1, y1), fill=parse_color(S["canvas"]["ground"]))
        tick = self.scene.ticks[index]
        for b in tick["botStates"]:
            self._tank(d, b)
            if self.scans:
                self._scan(d, b)
        self._bursts(d, index)
        for bullet in tick["bulletStates"]:
            self._bullet(d, bullet, tick)
        # The battlefield's edge clips arcs and explosions, as on the page.
        back = parse_color(S["canvas"]["background"])
        right, bottom = size[0] - 1, size[1] - 1
        bands = (
            (0, 0, right, y0 - 1),
            (0, y1 + 1, right, bottom),
            (0, 0, x0 - 1, bottom),
            (x1 + 1, 0, right, bottom),
        )
        for band in bands:
            if band[2] >= band[0] and band[3] >= band[1]:
                d.rectangle(band, fill=back)
        for b in tick["botStates"]:
            self._labels(d, b)
        self._indicator(d, tick, mode)
        self._scores(d, self.scene.results[index])
        return img.resize((self.width, self.height), Image.Resampling.BOX)

    def _tank(self, d: ImageDraw.ImageDraw, b: dict[str, Any]) -> None:
        T = self.S["tank"]
        x, y = b["x"], b["y"]
        s = self.kss * T["size"] / T["units"]  # pixels per design unit
        tracks = self._color(b.get("tracksColor"), "tracksColor")
        main = shade(tracks, 0, T["trackShade"])
        lw, lh = T["trackLinkSize"]
        link = shade(tracks, T["trackLinkLight"])
        for r in T["tracks"]:
            d.polygon(self._shape(self._rect(r), x, y, b["direction"]), fill=main, outline=self._border(main))
            tx, ty, tw, th = r
            for lx in T["trackLinks"]:
                pts = self._shape(self._rect((lx, ty + th / 2 - lh / 2, lw, lh)), x, y, b["direction"])
                d.polygon(pts, fill=link, outline=self._border(main))
        body = self._color(b.get("bodyColor"), "bodyColor")
        width = max(1, round(T["borderWidth"] * s))
        d.polygon(self._shape(self._rect(T["body"]), x, y, b["direction"]), fill=body)
        shadow = (0, 0, 0, round(255 * T["bodyShadowAlpha"]))
        d.polygon(self._shape(self._rect(T["bodyShadow"]), x, y, b["direction"]), fill=shadow)
        d.polygon(
            self._shape(self._rect(T["body"]), x, y, b["direction"]), outline=self._border(body), width=width
        )
        gun = self._color(b.get("gunColor"), "gunColor")
        for r in T["cannon"]:
            pts = self._shape(self._rect(r), x, y, b["gunDirection"])
            d.polygon(pts, fill=shade(gun, T["cannonLight"]), outline=self._border(gun))
        turret = self._color(b.get("turretColor"), "turretColor")
        d.polygon(self._shape(self._rect(T["turret"]), x, y, b["gunDirection"]), fill=turret)
        shadow = (0, 0, 0, round(255 * T["turretShadowAlpha"]))
        d.polygon(self._shape(self._rect(T["turretShadow"]), x, y, b["gunDirection"]), fill=shadow)
        d.polygon(
            self._shape(self._rect(T["turret"]), x, y, b["gunDirection"]),
            outline=self._border(turret),
            width=width,
        )
        if b.get("isDroid"):
            return
        radar = self._color(b.get("radarColor"), "radarColor")
        (ax, ay), (qx, qy), (bx, by) = T["radarDish"]
        curve = [
            (
                (1 - t) ** 2 * ax + 2 * (1 - t) * t * qx + t * t * bx,
                (1 - t) ** 2 * ay + 2 * (1 - t) * t * qy + t * t * by,
            )
            for t in (i / 8 for i in range(9))
        ]
        d.polygon(self._shape(curve, x, y, b["radarDirection"]), fill=radar, outline=self._border(radar))
        cx, cy = self.to_px(x, y)
        r = T["radarCircle"] * s
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=radar, outline=self._border(radar))

    def _scan(self, d: ImageDraw.ImageDraw, b: dict[str, Any]) -> None:
        if b.get("isDroid"):
            return
        sc = self.S["scan"]
        color = self._visible(self._color(b.get("scanColor"), "scanColor"))
        fill = (*color, round(255 * sc["alpha"]))
        sweep = b.get("radarSweep", 0.0)
        start = b["radarDirection"] - sweep if sweep >= 0 else b["radarDirection"]
        span = abs(sweep)
        x, y, R = b["x"], b["y"], sc["radius"]
        steps = max(1, math.ceil(span / 2))
        arc = [
            (
                x + R * math.cos(math.radians(start + span * i / steps)),
                y + R * math.sin(math.radians(start + span * i / steps)),
            )
            for i in range(steps + 1)
        ]
        pts = [self.to_px(x, y)] + [self.to_px(px, py) for px, py in arc]
        if span >= sc["lineBelowSweep"]:
            d.polygon(pts, fill=fill)
        else:
            d.line(pts[:2], fill=fill, width=1)

    def _bullet(self, d: ImageDraw.ImageDraw, bullet: dict[str, Any], tick: dict[str, Any]) -> None:
        owner = next((b for b in tick["botStates"] if b["id"] == bullet["ownerId"]), None)
        color = self._visible(
            self._color(bullet.get("color") or (owner or {}).get("bulletColor"), "bulletColor")
        )
        r = math.sqrt(self.S["bullet"]["areaPerPower"] * bullet["power"]) * self.kss
        cx, cy = self.to_px(bullet["x"], bullet["y"])
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=color)

    def _bursts(self, d: ImageDraw.ImageDraw, i: int) -> None:
        B = self.S["bursts"]
        ticks = self.scene.ticks
        now = ticks[i]
        longest = math.ceil(B["death"]["turns"] * (1 + B["death"]["delayShare"])) + 1
        j = i
        while j >= 0 and j > i - longest:
            t = ticks[j]
            if t["roundNumber"] != now["roundNumber"]:
                break
            age = now["turnNumber"] - t["turnNumber"]
            for ev in t.get("events", []):
                kind = ev["type"]
                if kind == "BulletHitBotEvent":
                    self._burst(d, ev["bullet"]["x"], ev["bullet"]["y"], B["botHit"], age)
                elif kind == "BulletHitWallEvent":
                    self._burst(d, ev["bullet"]["x"], ev["bullet"]["y"], B["bulletHitWall"], age)
                elif kind == "BulletHitBulletEvent":
                    a, b = ev["bullet"], ev["hitBullet"]
                    self._burst(d, (a["x"] + b["x"]) / 2, (a["y"] + b["y"]) / 2, B["bulletHitBullet"], age)
                elif kind == "BotDeathEvent":
                    seen = self._last_seen(j, ev["victimId"])
                    if seen is not None:
                        self._explosion(d, seen, t["roundNumber"], t["turnNumber"], ev["victimId"], age)
            j -= 1

    def _last_seen(self, j: int, bot_id: int) -> Point | None:
        for n in range(j, max(-1, j - 3), -1):
            for b in self.scene.ticks[n]["botStates"]:
                if b["id"] == bot_id:
                    return (b["x"], b["y"])
        return None

    def _burst(self, d: ImageDraw.ImageDraw, x: float, y: float, spec: dict[str, float], age: int) -> None:
        if age < 0 or age >= spec["turns"]:
            return
        t = age / spec["turns"]
        diameter = spec["from"] + (spec["to"] - spec["from"]) * t
        colors = self.S["bursts"]["colors"]
        pos = t * (len(colors) - 1)
        ct = min(len(colors) - 2, math.floor(pos))
        a, b = parse_color(colors[ct]), parse_color(colors[ct + 1])
        f = pos - ct
        mix = tuple(round(a[n] + (b[n] - a[n]) * f) for n in range(3))
        r = diameter / 2 * self.kss
        cx, cy = self.to_px(x, y)
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(*mix, round(255 * (1 - t))))

    def _explosion(
        self, d: ImageDraw.ImageDraw, at: Point, round_number: int, turn: int, victim: int, age: int
    ) -> None:
        D = self.S["bursts"]["death"]
        rnd = mulberry32(round_number * 1000003 + turn * 1009 + victim)
        part = D["radius"] * D["partShare"]
        spec = {"from": part * D["startShare"], "to": part, "turns": D["turns"]}
        for n in range(D["parts"]):
            px, py = at
            if n > 0:
                ox = (D["radius"] - part) * (1 - math.sqrt(next(rnd))) * (1 if next(rnd) > 0.5 else -1)
                oy = (D["radius"] - part) * (1 - math.sqrt(next(rnd))) * (1 if next(rnd) > 0.5 else -1)
                px, py = px + ox, py + oy
            delay = math.floor(next(rnd) * D["turns"] * D["delayShare"])
            self._burst(d, px, py, spec, age - delay)

    def _labels(self, d: ImageDraw.ImageDraw, b: dict[str, Any]) -> None:
        L = self.S["labels"]
        k = self.kss
        sx, sy = self.to_px(b["x"], b["y"])
        px = max(L["minFontPx"] * self.ss, round(L["font"] * k))
        font = self._font(int(px))
        color = parse_color(L["color"])
        d.text((sx, sy - L["energyBaseline"] * k), f"{b['energy']:.1f}", fill=color, font=font, anchor="ms")
        p = self.scene.participants.get(b["id"], {})
        name = f"{p.get('name', b.get('name', ''))} {p.get('version', '')} ({b['id']})"
        d.text((sx, sy - L["nameBaseline"] * k), name, fill=color, font=font, anchor="ms")
        bw, bh, gap = L["energyBar"]
        full = 120.0 if b.get("isDroid") else 100.0
        share = max(0.0, min(1.0, b["energy"] / full))
        top = sy - (gap + bh) * k
        d.rectangle(
            (sx - bw / 2 * k, top, sx + bw / 2 * k, top + bh * k), fill=parse_color(L["energyBarBack"])
        )
        bar = L["energyLow"] if b["energy"] < L["lowEnergy"] else L["energyHigh"]
        if share > 0:
            d.rectangle(
                (sx - bw / 2 * k, top, sx + (share - 0.5) * bw * k, top + bh * k), fill=parse_color(bar)
            )

    def _indicator(self, d: ImageDraw.ImageDraw, tick: dict[str, Any], mode: str) -> None:
        I = self.S["indicator"]  # noqa: E741
        ss = self.ss
        parts = [
            (mode, I["statusFontPx"], parse_color(I["live"] if mode == "LIVE" else I["replay"]) + (255,)),
            (f"ROUND {tick['roundNumber']}", I["infoFontPx"], tuple(I["roundRgba"])),
            (f"TURN {tick['turnNumber']}", I["infoFontPx"], tuple(I["turnRgba"])),
        ]
        x = I["x"] * ss
        y, h, pad = I["y"] * ss, I["height"] * ss, I["padding"] * ss
        for text, px, bg in parts:
            font = self._font(px * ss)
            w = d.textlength(text, font=font) + 2 * pad
            d.rounded_rectangle((x, y, x + w, y + h), radius=I["radius"] * ss, fill=bg)
            d.text((x + pad, y + h / 2), text, fill=parse_color(I["text"]), font=font, anchor="lm")
            x += w

    def _scores(self, d: ImageDraw.ImageDraw, results: list[dict[str, Any]] | None) -> None:
        P = self.S["scores"]
        ss = self.ss
        rows = [
            (str(r["rank"]), str(r["name"]), str(r["totalScore"]), str(r["firstPlaces"]))
            for r in results or []
        ]
        if not rows:
            rows = [
                ("", str(p.get("name", "")), "0", "0") for _, p in sorted(self.scene.participants.items())
            ]
        font = self._font(P["fontPx"] * ss)
        row_h, margin = P["rowPx"] * ss, P["margin"] * ss
        name_w = max(d.textlength(r[1], font=font) for r in rows)
        col = d.textlength("0000", font=font)
        width = margin + col / 2 + name_w + 2 * col + 2 * margin
        x0 = self.width * ss - width - margin
        y0 = margin
        d.rounded_rectangle(
            (x0, y0, x0 + width, y0 + row_h * len(rows) + margin), radius=6 * ss, fill=tuple(P["background"])
        )
        color = parse_color(P["text"])
        for n, (rank, name, total, firsts) in enumerate(rows):
            yy = y0 + margin / 2 + row_h * (n + 0.5)
            d.text((x0 + margin, yy), rank, fill=color, font=font, anchor="lm")
            d.text((x0 + margin + col / 2, yy), name, fill=color, font=font, anchor="lm")
            d.text((x0 + width - margin - col, yy), total, fill=color, font=font, anchor="rm")
            d.text((x0 + width - margin, yy), firsts, fill=color, font=font, anchor="rm")
