"""Running `gwctl` as a user does (a subprocess), and reading its output back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.processes import gw_env


def gwctl(
    home: Path,
    *args: str,
    input: str | None = None,
    timeout: float = 60,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`gwctl ARGS` with `GW_HOME=home` (so it finds that `gw up`), run in `cwd` with `env`
    added; never raises on a non-zero exit: tests assert the exit status."""
    return subprocess.run(
        [sys.executable, "-m", "gw.cli.gwctl", *args],
        env={**gw_env(home), **(env or {})},
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    """The stdout of a gwctl run that must have succeeded (else its output fails the test)."""
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def parse_table(text: str) -> list[dict[str, str]]:
    """Rows of an ASCII table (`+---+` borders) as dicts keyed by header; a cell spread over
    several lines comes back joined with newlines (trailing empty lines dropped)."""
    lines = [line for line in text.splitlines() if line.startswith(("+", "|"))]
    assert lines and lines[0].startswith("+"), f"no table in:\n{text}"
    cuts = [i for i, ch in enumerate(lines[0]) if ch == "+"]

    def cells(line: str) -> list[str]:
        return [line[a + 1 : b].strip() for a, b in zip(cuts, cuts[1:], strict=False)]

    blocks: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in lines[1:]:
        if line.startswith("+"):
            blocks.append(current)
            current = []
        else:
            current.append(cells(line))
    headers = blocks[0][0]
    rows = []
    for block in blocks[1:]:
        columns = list(zip(*block, strict=True))
        rows.append(
            {h: "\n".join(col).rstrip("\n") for h, col in zip(headers, columns, strict=True)}
        )
    return rows
