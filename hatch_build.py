"""Hatch build hook: compile sacbot's native parts while it is installed.

1. The C kernels (the learner's GRU loops, `sacbot.agent.accel.native_gru`, and the inference actor's step,
   `sacbot.agent.native_step`) with the system C compiler into the cache where `sacbot.agent.native_build`
   looks for them, so no process compiles on first use. Without a compiler this only warns: the first use
   tries again, else the torch and numpy paths run.
2. The engine with mypyc (`sacbot.compiled`).

Both go to the user's cache, named by a digest of their sources, not into the wheel, so an editable install
and a later edit can never run a stale build. A failed build only warns: sacbot then runs the same modules as
plain Python. SACBOT_COMPILE=0 skips both; SACBOT_COMPILE=kernels builds only the C kernels (seconds, where
the engine's build takes minutes).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# The modules that define a C kernel: a module-level string constant KERNEL_NAME, and the C source either as
# the string constant C_SOURCE or in the file <KERNEL_NAME>.c beside the module (package data).
KERNEL_MODULES = ("sacbot/agent/accel/native_gru.py", "sacbot/agent/native_step.py")


def _load(path: Path, name: str) -> ModuleType | None:
    """A standard-library-only module of the source tree, loaded by path (sacbot is not installed yet)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel_sources(src: Path) -> list[tuple[str, str]]:
    """(KERNEL_NAME, C source) of each kernel module, read from its syntax tree (its imports need torch): its
    string literal C_SOURCE, else the file <KERNEL_NAME>.c beside it."""
    found: list[tuple[str, str]] = []
    for rel in KERNEL_MODULES:
        module = src / rel
        constants: dict[str, str] = {}
        for node in ast.parse(module.read_text()).body:
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target = node.targets[0]
            if (
                isinstance(target, ast.Name)
                and target.id in ("KERNEL_NAME", "C_SOURCE")
                and isinstance(node.value, ast.Constant)
            ):
                constants[target.id] = ast.literal_eval(node.value)
        name = constants["KERNEL_NAME"]
        source = constants.get("C_SOURCE")
        if source is None:
            source = (module.parent / f"{name}.c").read_text()
        found.append((name, source))
    return found


class CompileEngineHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        mode = os.environ.get("SACBOT_COMPILE", "1")
        if mode == "0":
            return
        src = Path(self.root) / "src"
        self._build_kernels(src)
        if mode == "kernels":
            return
        module = _load(src / "sacbot" / "compiled.py", "_sacbot_compiled")
        if module is None:
            return
        start = time.monotonic()
        try:
            folder = module.build(src)
        except Exception as exc:  # noqa: BLE001 - never fail the install: the engine runs as Python
            print(f"sacbot: the compiled engine was not built ({exc}); it runs as Python", file=sys.stderr)
            return
        print(f"sacbot: compiled engine ready in {time.monotonic() - start:.0f} s: {folder}", file=sys.stderr)

    def _build_kernels(self, src: Path) -> None:
        try:
            native_build = _load(src / "sacbot" / "agent" / "native_build.py", "_sacbot_native_build")
            if native_build is None:
                return
            for name, source in kernel_sources(src):
                path = native_build.prebuild(name, source)
                print(f"sacbot: C kernel {name} ready: {path}", file=sys.stderr)
        except Exception as exc:  # noqa: BLE001 - never fail the install: the first use tries again
            print(f"sacbot: the C kernels were not built ({exc}); first use tries again", file=sys.stderr)
