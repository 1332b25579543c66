"""Endpoint addresses as manifests give them (static hosts, failover endpoints): IPs or
host names, checked before Envoy sees them, and their metadata."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from gw.translator.reports import ResourceReport


def is_ip(addr: str) -> bool:
    try:
        ipaddress.ip_address(addr)
    except ValueError:
        return False
    return True


def is_hostname(addr: str) -> bool:
    if len(addr) > 253:
        return False
    labels = addr.rstrip(".").split(".")
    return all(
        0 < len(label) <= 63
        and label[0] != "-"
        and label[-1] != "-"
        and all(c.isalnum() or c in "-_" for c in label)
        for label in labels
    )


def checked_address(
    addr: str, port: int, field: str, report: ResourceReport, *, name: str = "addr"
) -> str | None:
    """`addr` stripped when it and `port` are usable; None after reporting why not. `name`
    is the address field's name in the manifest."""
    addr = addr.strip()
    if not addr:
        report.error(f"{field}.{name}", f"{name} cannot be empty for host")
        return None
    if not is_ip(addr) and not is_hostname(addr):
        report.error(f"{field}.{name}", f"{addr!r} is neither an IP address nor a host name")
        return None
    if not 1 <= port <= 65535:
        report.error(f"{field}.port", f"port {port} is not between 1 and 65535")
        return None
    return addr


def endpoint_metadata(
    metadata: dict[str, dict[str, Any]],
) -> tuple[tuple[str, str], ...] | None:
    """Metadata by filter namespace, each value as canonical JSON text (frozen IR)."""
    if not metadata:
        return None
    return tuple(
        (namespace, json.dumps(value, sort_keys=True, separators=(",", ":")))
        for namespace, value in sorted(metadata.items())
    )
