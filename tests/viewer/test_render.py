"""`sacbot render`: clips drawn with Pillow from the page's own rules (style.json)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageSequence

from sacbot.errors import UserError
from sacbot.viewer.pages import style
from sacbot.viewer.painter import Painter, mulberry32
from sacbot.viewer.reader import read_recording
from sacbot.viewer.render import render_clip
from sacbot.viewer.scene import Scene, pick_frames

from .viewer_support import Played, screen

STYLE = style()


@pytest.fixture(scope="module")
def played(
    tmp_path_factory: pytest.TempPathFactory, shared_game: Callable[[pytest.TempPathFactory], Played]
) -> Played:
    return shared_game(tmp_path_factory)


def _close(got: tuple[int, ...], hex_color: str, tolerance: int) -> bool:
    h = hex_color.lstrip("#")
    want = tuple(int(h[i : i + 2], 16) for i in (0, 2, 4))
    return all(abs(a - b) <= tolerance for a, b in zip(got[:3], want, strict=True))


def test_a_gif_of_a_round_has_the_frames_and_the_tanks_where_they_were(
    played: Played, tmp_path: Path, quiet_frames: Callable[[list[dict[str, Any]]], list[int]]
) -> None:
    rec = read_recording(played.path)
    scene = Scene(rec.messages())
    out = tmp_path / "clip.gif"
    info = render_clip(rec, out, round_number=1, speed=8, fps=10, width=800, max_frames=30, scans=False)
    # 8x at 30 turns a second and 10 frames a second: every 24th turn of round 1 (and its last), 30 at most.
    indices = pick_frames(scene, speed=8, fps=10, round_number=1, max_frames=30)
    round1 = [i for i, t in enumerate(scene.ticks) if t["roundNumber"] == 1]
    expected = round1[::24][:30]
    if len(expected) < 30 and expected[-1] != round1[-1]:
        expected.append(round1[-1])
    assert indices == expected
    first, last = scene.ticks[indices[0]], scene.ticks[indices[-1]]
    assert info.frames == len(indices) and info.first_turn == (1, 1)
    assert info.last_turn == (last["roundNumber"], last["turnNumber"]) and first["turnNumber"] == 1
    quiet = set(quiet_frames(scene.ticks))
    sampled = [n for n, i in enumerate(indices) if i in quiet]
    assert len(sampled) >= 5
    with Image.open(out) as gif:
        assert _frames(gif) == len(indices) and gif.size == (info.width, info.height) == (800, 660)
        assert gif.info["duration"] == 100
        painter = Painter(scene, 800)
        # y points up in the arena and down in the image.
        assert screen(painter, 0, 0)[1] - screen(painter, 0, 600)[1] == pytest.approx(600)
        for n in sampled:
            gif.seek(n)
            frame = gif.convert("RGB")
            for bot in scene.ticks[indices[n]]["botStates"]:
                # The radar's round base sits on the bot's centre, in the bot's radar colour.
                radar = bot.get("radarColor") or STYLE["defaults"]["radarColor"]
                x, y = screen(painter, bot["x"], bot["y"])
                got = frame.getpixel((int(x), int(y)))
                assert isinstance(got, tuple) and _close(got, radar, 40), (n, bot["name"], got)


def test_the_clip_uses_the_pages_rules(played: Played) -> None:
    rec = read_recording(played.path)
    scene = Scene(rec.messages())
    painter = Painter(scene, 400)
    # Half the width: the battlefield is 400 pixels wide with the padding above and below.
    assert (painter.width, painter.height) == (400, 330)
    img = painter.paint(0)
    assert img.getpixel((5, 5)) == (64, 64, 64)  # canvas.background "#404040" above the battlefield
    left, top = screen(painter, 0, 600)
    assert top == pytest.approx(STYLE["canvas"]["padding"] / 2)
    assert img.getpixel((int(left) + 200, int(top) + 150)) == (0, 0, 0)  # canvas.ground
    # The explosions' randomness is the page's (viewer.js mulberry32, as a JS engine computes it).
    rnd = mulberry32(1234)
    assert [next(rnd) for _ in range(3)] == [0.07329497812315822, 0.7034119898453355, 0.9028560190927237]


def test_an_mp4_goes_through_ffmpeg(played: Played, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rec = read_recording(played.path)
    system_path = os.environ["PATH"]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(UserError, match="needs ffmpeg"):
        render_clip(rec, tmp_path / "clip.mp4", max_frames=3)
    # A stand-in ffmpeg that keeps its arguments and counts the raw frames' bytes.
    fake = tmp_path / "bin" / "ffmpeg"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\n"
        'echo "$@" > "$(dirname "$0")/args"\n'
        'wc -c > "$(dirname "$0")/bytes"\n'
        'for a; do last="$a"; done; echo mp4 > "$last"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{system_path}")
    info = render_clip(rec, tmp_path / "clip.mp4", width=200, max_frames=7)
    assert (tmp_path / "clip.mp4").read_text() == "mp4\n"
    assert int((fake.parent / "bytes").read_text()) == 7 * info.width * info.height * 3
    args = (fake.parent / "args").read_text().split()
    assert args[args.index("-s") + 1] == f"{info.width}x{info.height}" and "rgb24" in args
    # A failing ffmpeg is one clear error, and no clip is left behind.
    fake.write_text("#!/bin/sh\ncat > /dev/null\necho 'Unknown encoder' >&2\nexit 1\n")
    with pytest.raises(UserError, match="ffmpeg failed: Unknown encoder"):
        render_clip(rec, tmp_path / "other.mp4", width=200, max_frames=2)
    assert not (tmp_path / "other.mp4").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".mp4") == ["clip.mp4"]


def test_bad_clip_requests_are_one_clear_error(played: Played, tmp_path: Path) -> None:
    rec = read_recording(played.path)
    with pytest.raises(UserError, match="must end in .gif or .mp4"):
        render_clip(rec, tmp_path / "clip.png")
    with pytest.raises(UserError, match="--round 9: the recording has rounds 1-2"):
        render_clip(rec, tmp_path / "clip.gif", round_number=9)
    assert not list(tmp_path.iterdir())


def _frames(gif: Image.Image) -> int:
    return sum(1 for _ in ImageSequence.Iterator(gif))
