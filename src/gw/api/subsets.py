"""Subsets of an Upstream's endpoints (`subsetSpec`) and the subset a route picks
(`routeAction.single.subset`): Envoy's subset load balancer over endpoint labels."""

from __future__ import annotations

from typing import Literal

from gw.api.meta import Model


class Selector(Model):
    """A subset per distinct combination of values of `keys`."""

    keys: list[str] = []
    single_host_per_subset: bool = False


class Subset(Model):
    """Endpoints carrying every one of these labels."""

    values: dict[str, str] = {}


class SubsetSpec(Model):
    selectors: list[Selector] = []
    #: What a route gets when no endpoint carries the values it asks for.
    fallback_policy: Literal["ANY_ENDPOINT", "DEFAULT_SUBSET", "NO_FALLBACK"] = "ANY_ENDPOINT"
    default_subset: Subset | None = None
