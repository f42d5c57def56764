"""Hatch build hook: compile the engine with mypyc while sacbot is installed (`sacbot.compiled`).

The compiled modules go to the user's cache, named by a digest of their sources, not into the wheel, so an
editable install and a later edit can never run a stale build. A failed build only warns: sacbot then runs
the same modules as plain Python. SACBOT_COMPILE=0 skips it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompileEngineHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if os.environ.get("SACBOT_COMPILE", "1") == "0":
            return
        path = Path(self.root) / "src" / "sacbot" / "compiled.py"
        spec = importlib.util.spec_from_file_location("_sacbot_compiled", path)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        start = time.monotonic()
        try:
            folder = module.build(Path(self.root) / "src")
        except Exception as exc:  # noqa: BLE001 - never fail the install: the engine runs as Python
            print(f"sacbot: the compiled engine was not built ({exc}); it runs as Python", file=sys.stderr)
            return
        print(f"sacbot: compiled engine ready in {time.monotonic() - start:.0f} s: {folder}", file=sys.stderr)
