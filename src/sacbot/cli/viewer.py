"""`sacbot replay` and `sacbot render`: watch a recorded battle in the browser, or draw it into a clip."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import typer

from sacbot.errors import UserError


def replay(
    file: Path = typer.Argument(..., help="A recording (game-<time>.battle.gz, as `--record` writes them)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to serve the page on."),
    port: int = typer.Option(0, "--port", "-p", help="Port (0: a free one)."),
    open_browser: bool = typer.Option(False, "--open", help="Also open the page in the default browser."),
) -> None:
    """Serve the viewer page playing FILE; prints the URL and serves until Ctrl-C."""
    from sacbot.viewer.pages import ReplayServer, replay_pages
    from sacbot.viewer.reader import read_recording

    recording = read_recording(file)
    server = ReplayServer(replay_pages(recording), host=host, port=port).start()
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        cut = " (cut short: it plays up to where the recording stops)" if recording.truncated else ""
        typer.echo(f"sacbot replay: {server.url} plays {recording.path.name}{cut}; Ctrl-C stops", err=False)
        if open_browser:
            import webbrowser

            webbrowser.open(server.url)
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.stop()


def render(
    file: Path = typer.Argument(..., help="A recording (game-<time>.battle.gz)."),
    out: Path = typer.Option(..., "--out", "-o", help="The clip: NAME.gif, or NAME.mp4 (needs ffmpeg)."),
    round_number: int | None = typer.Option(None, "--round", "-r", help="Only this round (default: all)."),
    speed: float = typer.Option(
        4.0, "--speed", help="Playback speed; 1 is the page's 1x (30 turns a second)."
    ),
    fps: float = typer.Option(15.0, "--fps", help="Frames per second of the clip."),
    width: int = typer.Option(480, "--width", help="Width in pixels."),
    max_frames: int = typer.Option(900, "--max-frames", help="Stop after this many frames."),
    scans: bool = typer.Option(True, "--scans/--no-scans", help="Draw the radars' scan arcs."),
) -> None:
    """Draw a recording into a GIF or MP4 clip, without a browser."""
    from sacbot.viewer.reader import read_recording
    from sacbot.viewer.render import render_clip

    if out.suffix.lower() not in (".gif", ".mp4"):
        raise UserError(f"--out must end in .gif or .mp4, not {out.name!r}", 2)
    recording = read_recording(file)
    info = render_clip(
        recording,
        out,
        speed=speed,
        fps=fps,
        width=width,
        round_number=round_number,
        max_frames=max_frames,
        scans=scans,
    )
    (r0, t0), (r1, t1) = info.first_turn, info.last_turn
    typer.echo(
        f"wrote {info.path}: {info.frames} frames, {info.width}x{info.height}, {info.fps:g} fps "
        f"(round {r0} turn {t0} to round {r1} turn {t1})"
    )
