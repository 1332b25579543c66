"""Fault injection on a route: a share of requests aborted with a status, or delayed."""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.matching import Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class FaultAbort:
    status: int
    share: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class FaultDelay:
    delay_ms: int
    share: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class Faults:
    abort: FaultAbort | None = None
    delay: FaultDelay | None = None
