"""Which limit applies to a descriptor (pure: no Redis)."""

from __future__ import annotations

from gw.ratelimit.limits import SET_RULE_KEY, Limits
from gw.wire.ratelimit import (
    CONFIG_KEY,
    SET_CONFIG_KEY,
    Descriptor,
    Limit,
    RateLimitConfig,
    SetDescriptor,
    SimpleDescriptor,
)

PER_MINUTE = Limit(unit="MINUTE", requests_per_unit=3)
VIP = Limit(unit="MINUTE", requests_per_unit=100)
NESTED = Limit(unit="SECOND", requests_per_unit=1)
DEBUG = Limit(unit="HOUR", requests_per_unit=10)

LIMITS = Limits(
    {
        "ns.a": RateLimitConfig(
            config_id="ns.a",
            namespace="ns",
            name="a",
            descriptors=(
                Descriptor(key="client", limit=PER_MINUTE),
                Descriptor(key="client", value="vip", limit=VIP),
                Descriptor(
                    key="generic_key",
                    value="writes",
                    descriptors=(Descriptor(key="remote_address", limit=NESTED, weight=1),),
                ),
                Descriptor(key="header_match", value="debug", limit=DEBUG, always_apply=True),
            ),
        )
    }
)


def entries(*pairs: tuple[str, str]) -> list[tuple[str, str]]:
    return [(CONFIG_KEY, "ns.a"), *pairs]


def test_a_value_beats_the_wildcard_and_the_wildcard_takes_any_value() -> None:
    vip = LIMITS.rule(entries(("client", "vip")))
    other = LIMITS.rule(entries(("client", "anyone")))
    assert vip is not None and vip.limit == VIP
    assert other is not None and other.limit == PER_MINUTE


def test_the_last_entry_must_reach_a_node_with_a_limit() -> None:
    nested = LIMITS.rule(entries(("generic_key", "writes"), ("remote_address", "10.0.0.1")))
    assert nested is not None and nested.limit == NESTED
    assert LIMITS.rule(entries(("generic_key", "writes"))) is None  # node without a limit
    assert LIMITS.rule(entries(("client", "x"), ("extra", "y"))) is None  # leaves the tree
    assert LIMITS.rule(entries(("nope", "x"))) is None
    assert LIMITS.rule([(CONFIG_KEY, "ns.unknown"), ("client", "x")]) is None
    assert LIMITS.rule([("client", "x")]) is None  # no config entry


def test_only_the_heaviest_rules_apply_plus_always_apply() -> None:
    light = entries(("client", "x"))
    heavy = entries(("generic_key", "writes"), ("remote_address", "10.0.0.1"))
    always = entries(("header_match", "debug"))
    applied = LIMITS.applied([light, heavy, always, entries(("nope", "x"))])
    assert applied[0] is None  # weight 0 < 1
    assert applied[1] is not None and applied[1].limit == NESTED
    assert applied[2] is not None and applied[2].limit == DEBUG
    assert applied[3] is None
    alone = LIMITS.applied([light])
    assert alone[0] is not None and alone[0].limit == PER_MINUTE


SET_LIMITS = Limits(
    {
        "gw:settings": RateLimitConfig(
            config_id="gw:settings",
            namespace="gw-system",
            name="default",
            descriptors=(),
            set_descriptors=(
                SetDescriptor(
                    simple_descriptors=(
                        SimpleDescriptor(key="type", value="a"),
                        SimpleDescriptor(key="number", value="one"),
                    ),
                    limit=PER_MINUTE,
                ),
                SetDescriptor(simple_descriptors=(SimpleDescriptor(key="type"),), limit=VIP),
                SetDescriptor(
                    simple_descriptors=(SimpleDescriptor(key="type"),),
                    limit=DEBUG,
                    always_apply=True,
                ),
                SetDescriptor(limit=NESTED),  # no entries: every request
            ),
        )
    }
)


def set_entries(*pairs: tuple[str, str]) -> list[tuple[str, str]]:
    return [(SET_CONFIG_KEY, "gw:settings"), *pairs]


def test_set_rules_match_subsets_in_any_order_first_match_plus_always_apply() -> None:
    # Order does not matter, extra entries do not matter: rule 0 matches first, rule 1 is
    # skipped (a match came before), rule 2 (alwaysApply) counts too, rule 3 is skipped.
    rules = SET_LIMITS.set_rules(set_entries(("color", "blue"), ("number", "one"), ("type", "a")))
    assert [(r.limit, c[1:]) for r, c in rules] == [
        (PER_MINUTE, [(SET_RULE_KEY, "0"), ("type", "a"), ("number", "one")]),
        (DEBUG, [(SET_RULE_KEY, "2"), ("type", "a")]),
    ]
    # Without `number`, rule 1 is the first match; a value-less key is counted per value.
    rules = SET_LIMITS.set_rules(set_entries(("type", "b")))
    assert [(r.limit, c[1:]) for r, c in rules] == [
        (VIP, [(SET_RULE_KEY, "1"), ("type", "b")]),
        (DEBUG, [(SET_RULE_KEY, "2"), ("type", "b")]),
    ]
    # Nothing of the others: the all-encompassing rule.
    rules = SET_LIMITS.set_rules(set_entries(("color", "red")))
    assert [(r.limit, c[1:]) for r, c in rules] == [(NESTED, [(SET_RULE_KEY, "3")])]
    assert SET_LIMITS.set_rules([(SET_CONFIG_KEY, "nope"), ("type", "a")]) == []


def test_matches_mix_tree_and_set_descriptors() -> None:
    both = Limits({**LIMITS.configs, **SET_LIMITS.configs})
    found = both.matches([entries(("client", "x")), set_entries(("type", "b"))])
    assert [(m.index, m.rule.limit) for m in found] == [(0, PER_MINUTE), (1, VIP), (1, DEBUG)]
