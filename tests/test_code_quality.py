"""The code-quality gates of STYLE.md, as tests: lint, format, strict types, layering."""

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
