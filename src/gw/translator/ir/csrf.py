"""CSRF policies of virtual hosts, routes and weighted destinations."""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.matching import Fraction, StringMatch


@dataclass(frozen=True, slots=True, kw_only=True)
class CsrfPolicy:
    #: Share of requests the policy is enforced on.
    enforced: Fraction
    #: Share of requests only checked and counted.
    shadow: Fraction | None = None
    additional_origins: tuple[StringMatch, ...] = ()
