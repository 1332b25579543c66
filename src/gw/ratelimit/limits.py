"""Which limit applies to a descriptor Envoy sends. Pure: no I/O, no clock.

A descriptor is a list of entries (key, value). Its first entry names the RateLimitConfig
(`gw.rlc = <namespace>.<name>`, put there by the translator); the rest walk that config's
descriptor tree: at each level the node with the same key and value wins, else the node
with the same key and no value (any value). The descriptor is limited by the node its last
entry reaches, when that node has a limit; a descriptor that leaves the tree early, or ends
on a node without a limit, is not limited. These are the rules of Envoy's reference server.

When several descriptors of one request are limited, only those of the highest `weight`
count, plus every one marked `alwaysApply` (the established gateway's rule).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gw.wire.ratelimit import CONFIG_KEY, Descriptor, Limit, RateLimitConfig

Entries = Sequence[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Rule:
    limit: Limit
    weight: int
    always_apply: bool


class Limits:
    def __init__(self, configs: Mapping[str, RateLimitConfig]) -> None:
        self.configs = dict(configs)

    def rule(self, entries: Entries) -> Rule | None:
        """The rule of one descriptor, or None when it is not limited."""
        if len(entries) < 2 or entries[0][0] != CONFIG_KEY:
            return None
        config = self.configs.get(entries[0][1])
        if config is None:
            return None
        level: Sequence[Descriptor] = config.descriptors
        node: Descriptor | None = None
        for key, value in entries[1:]:
            node = _find(level, key, value)
            if node is None:
                return None
            level = node.descriptors
        if node is None or node.limit is None:
            return None
        return Rule(node.limit, node.weight, node.always_apply)

    def applied(self, descriptors: Sequence[Entries]) -> list[Rule | None]:
        """The rule that counts for each descriptor (None: not limited, or outweighed)."""
        rules = [self.rule(d) for d in descriptors]
        weights = [r.weight for r in rules if r is not None and not r.always_apply]
        top = max(weights, default=0)
        return [r if r is not None and (r.always_apply or r.weight == top) else None for r in rules]


def _find(level: Sequence[Descriptor], key: str, value: str) -> Descriptor | None:
    wildcard = None
    for node in level:
        if node.key != key:
            continue
        if node.value == value:
            return node
        if node.value is None:
            wildcard = node
    return wildcard
