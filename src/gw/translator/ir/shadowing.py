"""Traffic shadowing: a copy of a share of a route's requests to another cluster."""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.matching import Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class Shadow:
    cluster: str
    share: Fraction
    #: True: the copy's Host is left as it is (no `-shadow` suffix).
    keep_host: bool = False
    #: The copy's Host, replaced whole.
    host: str | None = None
