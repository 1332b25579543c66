"""Resources kept serialized (`xds.Wire`): the bytes are exactly the message's, readers
still get messages, and the xDS cache sends the bytes as they are."""

from __future__ import annotations

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.config.route.v3 import route_pb2, scoped_route_pb2
from google.protobuf import any_pb2

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.routes import route_configuration, route_configuration_wire
from gw.translator.envoy.xds import Messages, Wire
from gw.xds.cache import pack_resources


def virtual_host(n: int) -> rc_pb2.VirtualHost:
    out = rc_pb2.VirtualHost(
        name=f"ns_vs-{n}" + "x" * 150 * n,  # a length of two varint bytes from n = 1
        domains=[f"host-{n}.test", f"host-{n}.test:*"],
        routes=[
            rc_pb2.Route(
                name=f"ns_vs-{n}-route-0",
                match=rc_pb2.RouteMatch(prefix="/"),
                route=rc_pb2.RouteAction(cluster="up_ns"),
            )
        ],
    )
    # A map field: serialized in key order only when deterministic.
    out.typed_per_filter_config["z.filter"].CopyFrom(any_pb2.Any(type_url="t/z", value=b"1"))
    out.typed_per_filter_config["a.filter"].CopyFrom(any_pb2.Any(type_url="t/a", value=b"2"))
    return out


def test_a_route_configuration_made_of_serialized_virtual_hosts_is_the_message_serialized() -> None:
    vhosts = [virtual_host(n) for n in range(3)]
    parts = [v.SerializeToString(deterministic=True) for v in vhosts]
    for options in (
        None,
        ir.RouteConfigOptions(),
        ir.RouteConfigOptions(
            max_direct_response_body_bytes=8192, most_specific_header_mutations_wins=True
        ),
    ):
        for name in ("listener-::-8080-routes-002a", "r" * 300, ""):
            for count in (0, 1, 3):
                whole = route_configuration(name, vhosts[:count], options)
                assert route_configuration_wire(name, parts[:count], options) == (
                    whole.SerializeToString(deterministic=True)
                )


def test_messages_hold_wires_and_give_messages() -> None:
    scope = scoped_route_pb2.ScopedRouteConfiguration(
        name="l/a.test", route_configuration_name="l-0"
    )
    scope.key.fragments.add().string_key = "a.test"
    wire = Wire.of(scope)
    held = Messages({"l/a.test": wire})
    assert held["l/a.test"] == scope and held["l/a.test"] is not scope
    assert held.raw("l/a.test") is wire and held.raw("l/b.test") is None
    assert dict(held.raw_items()) == {"l/a.test": wire}
    assert Messages(held).raw("l/a.test") is wire  # made from Messages: not parsed
    assert wire.type_url == names.SCOPED_ROUTE


def test_the_cache_sends_a_wire_as_it_is_and_keeps_no_any() -> None:
    config = route_configuration("r", [virtual_host(0)])
    wire = Wire(route_pb2.RouteConfiguration, config.SerializeToString(deterministic=True))
    packed = pack_resources({names.ROUTE: Messages({"r": wire})})
    ((name, entry),) = packed.select(names.ROUTE, None)
    assert name == "r" and entry.value is wire.data and entry.message is wire
    assert entry.resource == any_pb2.Any(type_url=names.ROUTE, value=wire.data)
    again = pack_resources({names.ROUTE: Messages({"r": wire})}, packed)
    assert again.select(names.ROUTE, None)[0][1] is entry  # the same object: not packed again
    assert again.changed_since(packed.token) == {names.ROUTE: frozenset()}
