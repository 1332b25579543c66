"""Writing manifests into a served folder the way people and tools do."""

from __future__ import annotations

import os
from pathlib import Path


def save(path: Path, text: str) -> None:
    """Save as editors do: write a temporary file, then rename it over the old one, so the
    watcher never sees a half-written file."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
