"""Where resources live. A store yields immutable `Snapshot`s and keeps statuses.

Nothing outside this package reads manifest files or talks to the orchestrator.
"""

from gw.snapshot import InputError, Snapshot, Source

__all__ = ["InputError", "Snapshot", "Source"]
