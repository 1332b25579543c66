"""Where resources live. A store yields immutable `Snapshot`s and keeps statuses.

`DirectoryStore` serves a folder of manifests; the orchestrator's store (`OrchStore`) is in
`gw.orch`, behind the same interface. Nothing outside this package reads manifest files,
and this package knows nothing of the orchestrator.
"""

from gw.snapshot import InputError, Snapshot, Source

__all__ = ["InputError", "Snapshot", "Source"]
