"""The viewer's HTTP side: the page's static files, its `config.json` (live or replay), and for a replay the
recording as newline-delimited JSON.

`Pages` maps a request path to (status, content type, body). `sacbot arena serve` hands it to the arena
server, which answers plain HTTP GETs on its WebSocket port with it (`ArenaServer(http_handler=...)`);
`sacbot replay` serves it with `ReplayServer`, a small threaded HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sacbot.errors import UserError
from sacbot.viewer.reader import Recording

STATIC = Path(__file__).parent / "static"
RECORDING_PATH = "/recording.ndjson"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
}


def style() -> dict[str, Any]:
    """The drawing rules the page and the clip renderer share (`static/style.json`)."""
    loaded: dict[str, Any] = json.loads((STATIC / "style.json").read_text())
    return loaded


class Pages:
    """The page's files for one viewer: `config` tells the page what to show (`{"mode": "live"}`, or a replay
    with its title); `recording` is the NDJSON body of `/recording.ndjson` for a replay."""

    def __init__(self, config: dict[str, Any], recording: bytes | None = None) -> None:
        self.config = dict(config)
        if recording is not None:
            self.config["recording"] = RECORDING_PATH.lstrip("/")
        self.recording = recording
        # Read once: the files are small, and a request never touches the disk.
        self.files: dict[str, tuple[str, bytes]] = {}
        for f in sorted(STATIC.iterdir()):
            if f.is_file() and f.suffix in _TYPES:
                self.files["/" + f.name] = (_TYPES[f.suffix], f.read_bytes())
        self.files["/"] = self.files["/index.html"]
        self.files["/config.json"] = (_TYPES[".json"], json.dumps(self.config).encode())

    def __call__(self, target: str) -> tuple[int, str, bytes]:
        path = urlsplit(target).path or "/"
        if path == RECORDING_PATH and self.recording is not None:
            return 200, "application/x-ndjson", self.recording
        found = self.files.get(path)
        if found is None:
            return 404, "text/plain; charset=utf-8", f"not found: {path}\n".encode()
        return 200, found[0], found[1]


def live_pages() -> Pages:
    """The page of `sacbot arena serve`: it joins the server it came from as an observer."""
    return Pages({"mode": "live", "title": "live"})


def replay_pages(recording: Recording) -> Pages:
    config = {"mode": "replay", "title": recording.path.name, "truncated": recording.truncated}
    return Pages(config, recording.ndjson())


class _Handler(BaseHTTPRequestHandler):
    pages: Pages

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        status, content_type, body = self.pages(self.path)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        return


class ReplayServer:
    """Serves `pages` over HTTP on `host:port` (0: a free port) from a background thread."""

    def __init__(self, pages: Pages, host: str = "127.0.0.1", port: int = 0) -> None:
        if not 0 <= port <= 65535:
            raise UserError(f"--port must be between 0 and 65535, not {port}", 2)
        handler = type("Handler", (_Handler,), {"pages": pages})
        try:
            self.httpd = ThreadingHTTPServer((host, port), handler)
        except OSError as exc:
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}", 2) from None
        self.httpd.daemon_threads = True
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def start(self) -> ReplayServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="sacbot-replay", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(5)
            self._thread = None
        self.httpd.server_close()

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
