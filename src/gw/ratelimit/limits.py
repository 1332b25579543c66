"""Which limit applies to a descriptor Envoy sends. Pure: no I/O, no clock.

A descriptor is a list of entries (key, value). Its first entry names the RateLimitConfig
(`gw.rlc = <namespace>.<name>`, put there by the translator); the rest walk that config's
descriptor tree: at each level the node with the same key and value wins, else the node
with the same key and no value (any value). The descriptor is limited by the node its last
entry reaches, when that node has a limit; a descriptor that leaves the tree early, or ends
on a node without a limit, is not limited. These are the rules of Envoy's reference server.

When several descriptors of one request are limited, only those of the highest `weight`
count, plus every one marked `alwaysApply` (the established gateway's rule).

A set-style descriptor (first entry `gw.rlc.set = <config>`, from `setActions`) is matched
against the config's set rules instead: a rule matches when the descriptor holds each of its
entries (a key, with its value if the rule gives one), whatever else it holds and in any
order; rules are tried in order, the first match counts and so does every later match
marked `alwaysApply`. Each matching rule counts under its own counter: the rule's position
and the values the request gave its keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gw.wire.ratelimit import (
    CONFIG_KEY,
    SET_CONFIG_KEY,
    Descriptor,
    Limit,
    RateLimitConfig,
    SetDescriptor,
)

Entries = Sequence[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Rule:
    limit: Limit
    weight: int
    always_apply: bool


@dataclass(frozen=True, slots=True)
class Match:
    """A limit that counts for the descriptor at `index` of a request, and the entries that
    name its counter."""

    index: int
    rule: Rule
    counter: Entries


#: The entry naming a set rule in its counter: rules of one config never share a counter.
SET_RULE_KEY = "gw.set.rule"


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

    def matches(self, descriptors: Sequence[Entries]) -> list[Match]:
        """Every limit that counts for a request's descriptors, tree and set rules."""
        out = [
            Match(i, rule, entries)
            for i, (entries, rule) in enumerate(
                zip(descriptors, self.applied(descriptors), strict=True)
            )
            if rule is not None
        ]
        for i, entries in enumerate(descriptors):
            if entries and entries[0][0] == SET_CONFIG_KEY:
                out.extend(Match(i, rule, counter) for rule, counter in self.set_rules(entries))
        return out

    def set_rules(self, entries: Entries) -> list[tuple[Rule, Entries]]:
        """The set rules that count for one set-style descriptor, with their counters."""
        config = self.configs.get(entries[0][1])
        if config is None:
            return []
        values: dict[str, list[str]] = {}
        for key, value in entries[1:]:
            values.setdefault(key, []).append(value)
        out: list[tuple[Rule, Entries]] = []
        for position, rule in enumerate(config.set_descriptors):
            if rule.limit is None or (out and not rule.always_apply):
                continue
            found = _holds(rule, values)
            if found is not None:
                counter = [entries[0], (SET_RULE_KEY, str(position)), *found]
                out.append((Rule(rule.limit, 0, rule.always_apply), counter))
        return out

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


def _holds(rule: SetDescriptor, values: Mapping[str, list[str]]) -> list[tuple[str, str]] | None:
    """The entries of a descriptor that satisfy each of the rule's, or None if one is not."""
    found = []
    for wanted in rule.simple_descriptors:
        given = values.get(wanted.key, [])
        if wanted.value is not None:
            if wanted.value not in given:
                return None
            found.append((wanted.key, wanted.value))
        elif given:
            found.append((wanted.key, given[0]))
        else:
            return None
    return found
