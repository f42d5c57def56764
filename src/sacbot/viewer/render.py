"""`sacbot render`: a recording drawn into a GIF (Pillow) or an MP4 (frames piped to ffmpeg), no browser.

It draws what the web page draws (tanks in their own colours, scan arcs, bullets, explosions, energy bars and
names, the round/turn indicator and a score panel) from the same rules, `static/style.json`; only debug
graphics (SVG) are left to the page. Frames are sampled from the turns: at `speed` 1 a clip runs at the page's
replay pace (`replayTps` turns a second).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from sacbot.errors import UserError
from sacbot.viewer.painter import Painter, parse_color
from sacbot.viewer.reader import Recording
from sacbot.viewer.scene import Scene, pick_frames


@dataclass
class ClipInfo:
    path: Path
    frames: int
    width: int
    height: int
    fps: float
    first_turn: tuple[int, int]  # (round, turn)
    last_turn: tuple[int, int]


def render_clip(
    recording: Recording,
    out: str | Path,
    *,
    speed: float = 4.0,
    fps: float = 15.0,
    width: int = 480,
    round_number: int | None = None,
    max_frames: int = 900,
    scans: bool = True,
) -> ClipInfo:
    """Draw `recording` into `out` (.gif, or .mp4 with ffmpeg on PATH), written atomically; `scans=False`
    leaves the scan arcs out (the page's "Scan arcs" toggle)."""
    out = Path(out)
    kind = out.suffix.lower()
    if kind not in (".gif", ".mp4"):
        raise UserError(f"--out must end in .gif or .mp4, not {out.name!r}", 2)
    if speed <= 0 or fps <= 0 or width < 64 or max_frames < 1:
        raise UserError("--speed and --fps must be positive, --width at least 64, --max-frames at least 1", 2)
    ffmpeg = shutil.which("ffmpeg") if kind == ".mp4" else None
    if kind == ".mp4" and ffmpeg is None:
        raise UserError("writing .mp4 needs ffmpeg on PATH; write a .gif instead", 2)
    scene = Scene(recording.messages())
    indices = pick_frames(scene, speed=speed, fps=fps, round_number=round_number, max_frames=max_frames)
    painter = Painter(scene, width, scans=scans)
    out.parent.mkdir(parents=True, exist_ok=True)
    # A temporary name beside the clip (created with the usual permissions), renamed over it when done.
    tmp = out.with_name(f".{out.stem}.{os.getpid()}.{secrets.token_hex(4)}{kind}")
    try:
        if kind == ".gif":
            _write_gif(painter, indices, tmp, fps)
        else:
            assert ffmpeg is not None
            _write_mp4(painter, indices, tmp, fps, ffmpeg)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    first, last = scene.ticks[indices[0]], scene.ticks[indices[-1]]
    return ClipInfo(
        out,
        len(indices),
        painter.width,
        painter.height,
        fps,
        (first["roundNumber"], first["turnNumber"]),
        (last["roundNumber"], last["turnNumber"]),
    )


def _palette(painter: Painter, indices: list[int]) -> Image.Image:
    """One palette for the whole clip, so colours do not flicker: from a few frames spread over it, plus every
    colour a bot used and the explosions' colours."""
    S = painter.S
    colors = {parse_color(c) for c in S["bursts"]["colors"]}
    colors |= {parse_color(c) for c in S["defaults"].values()}
    for tick in painter.scene.ticks:
        for b in tick["botStates"]:
            colors.update(parse_color(b[key]) for key in _COLOR_KEYS if key in b)
    picks = sorted({indices[int(n * (len(indices) - 1) / 3)] for n in range(4)})
    frames = [painter.paint(i) for i in picks]
    w, h = frames[0].size
    sample = Image.new("RGB", (w, h * len(frames) + 1))
    for n, frame in enumerate(frames):
        sample.paste(frame, (0, h * n))
    strip = Image.new("RGB", (len(colors), 1))
    for n, color in enumerate(sorted(colors)):
        strip.putpixel((n, 0), color)
    sample.paste(strip.resize((w, 1), Image.Resampling.NEAREST), (0, h * len(frames)))
    return sample.quantize(colors=255, method=Image.Quantize.MEDIANCUT)


_COLOR_KEYS = (
    "bodyColor",
    "turretColor",
    "radarColor",
    "bulletColor",
    "scanColor",
    "tracksColor",
    "gunColor",
)


def _write_gif(painter: Painter, indices: list[int], path: Path, fps: float) -> None:
    palette = _palette(painter, indices)
    frames = [painter.paint(i).quantize(palette=palette, dither=Image.Dither.NONE) for i in indices]
    frames[0].save(
        path,
        format="GIF",
        save_all=True,
        append_images=frames[1:],
        duration=max(20, round(1000 / fps)),
        loop=0,
        optimize=False,
        disposal=1,
    )


def _write_mp4(painter: Painter, indices: list[int], path: Path, fps: float, ffmpeg: str) -> None:
    cmd = [
        ffmpeg, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
        "-s", f"{painter.width}x{painter.height}", "-r", f"{fps:g}", "-i", "-",
        "-pix_fmt", "yuv420p", "-movflags", "+faststart", "-f", "mp4", str(path),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stderr is not None
    try:
        for i in indices:
            proc.stdin.write(painter.paint(i).tobytes())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    err = proc.stderr.read().decode(errors="replace").strip()
    if proc.wait() != 0:
        raise UserError(f"ffmpeg failed: {err.splitlines()[-1] if err else f'exit code {proc.returncode}'}")
