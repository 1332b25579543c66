"""String matchers and fractions, as Envoy's filters take them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class StringMatch:
    kind: Literal["exact", "prefix", "suffix", "regex"]
    value: str
    ignore_case: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Fraction:
    """`numerator` out of `denominator` (100, 10,000 or 1,000,000); `runtime_key` lets
    Envoy's runtime override it."""

    numerator: int
    denominator: Literal[100, 10_000, 1_000_000] = 100
    runtime_key: str = ""
