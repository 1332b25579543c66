"""A route's tracing: its span's name and how much of its traffic is sampled."""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.matching import Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteTracing:
    #: The span's operation name (None: Envoy's default).
    descriptor: str | None = None
    #: Whether the name is answered to the client (`x-envoy-decorator-operation`).
    propagate: bool | None = None
    client_sampling: Fraction
    random_sampling: Fraction
    overall_sampling: Fraction
