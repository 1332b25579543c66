"""The code-quality gates of STYLE.md, as tests: lint, format, strict types, layering (the
import graph, and what the request-path servers and the IR load at run time)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "src", "tests", "bench"],
        ["ruff", "format", "--check", "src", "tests", "bench"],
        ["lint-imports"],
        ["mypy"],
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_gate(command: list[str]) -> None:
    # lint-imports imports `gw`: make it this tree's, not whichever one the venv installed.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    result = subprocess.run(
        [str(BIN / command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr


#: What an entry module must not load, by whatever path: Python runs every ancestor
#: package's `__init__` on the way, which the import graph of lint-imports does not show,
#: and third-party imports are followed too. The servers are on the request path: they
#: start and run with their own code, the contracts of gw.wire and the xDS client only.
RUN_TIME_BOUNDARIES = {
    "gw.extauth.server": (
        "gw.translator", "gw.api", "gw.snapshot", "gw.store", "gw.controlplane",
        "gw.ratelimit", "envoy.config.listener", "envoy.config.route",
        "envoy.config.cluster", "envoy.extensions",
    ),
    "gw.ratelimit.server": (
        "gw.translator", "gw.api", "gw.snapshot", "gw.store", "gw.controlplane",
        "gw.extauth", "envoy.config.listener", "envoy.config.route", "envoy.config.cluster",
    ),
    "gw.translator.ir": ("gw.api", "gw.translator.gateway", "google", "pydantic", "envoy"),
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(RUN_TIME_BOUNDARIES))
def test_loads_nothing_beyond_its_boundary(module: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    loaded = result.stdout.split()
    assert module in loaded
    beyond = [
        m
        for m in loaded
        if any(m == f or m.startswith(f + ".") for f in RUN_TIME_BOUNDARIES[module])
    ]
    assert beyond == []
