"""Transformation stages that run as Lua scripts → Envoy's Lua filter, one per stage.

The listener gets `gw.transform.<stage>.lua` without a default script, holding gw's
shared script (the runtime and a dispatcher) in three variants by the hooks they define
(`transform_lua.SHARED_NAMES`): it does nothing on a route unless a `LuaPerRoute` there
names one and gives the route's rules in its `filter_context` (compiled by the dispatcher
once per worker, the first time a request needs them). A TLS virtual host's own chain
holds no script: its routes carry whole ones (`_run` says why). A virtual host's rules are set on
the virtual host; a route with its own transformations gets its own, or the filter
disabled when its stage is done otherwise; a weighted cluster with its own likewise. Rules
travel in the route configuration, so changing a template never touches the listener (no
connection is drained).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from envoy.config.core.v3 import base_pb2
from envoy.extensions.filters.http.lua.v3 import lua_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import struct_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack
from gw.translator.envoy.transform import (
    Stage,
    carries_transformations,
    effective,
    own,
    stage_of,
    weighted_clusters,
)
from gw.translator.envoy.transform_lua import (
    ID_KEY,
    RULES_KEY,
    SHARED_NAMES,
    route_rules,
    shared_source,
    standalone_source,
)


class TransformScript:
    def __init__(self, stage: Stage) -> None:
        self.stage = stage
        self.name = names.transform_filter(stage, "lua")
        self.state = names.transform_metadata(stage)

    def _script(self, staged: ir.StagedTransformations | None) -> ir.TransformationScript | None:
        found = stage_of(staged, self.stage)
        return found if isinstance(found, ir.TransformationScript) else None

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        if next(self._scripts(vhosts), None) is None:
            return None
        return self._filter(SHARED_NAMES.values())

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        """A plain listener's filter holds every variant of the shared script, whatever its
        routes need now: a route that comes to need another changes only the route
        configuration. A TLS virtual host's chain holds none: its routes carry whole
        scripts (`_run`)."""
        if vhosts and vhosts[0].tls is not None:  # stage 1 never mixes them (`tls.is_tls`)
            return None if next(self._scripts(vhosts), None) is None else self._filter(())
        return self.listener_filter(vhosts)

    def _scripts(self, vhosts: Sequence[ir.VirtualHost]) -> Iterator[ir.TransformationScript]:
        """The scripts of this stage on `vhosts`: each host's, its routes' own, and their
        weighted clusters' own."""
        for vhost in vhosts:
            if (script := self._script(vhost.transformations)) is not None:
                yield script
            for route in vhost.routes:
                if not carries_transformations(route):
                    continue  # the host's, given above
                owners = [own(route)] + [c.transformations for c in weighted_clusters(route)]
                for staged in owners:
                    if (script := self._script(staged)) is not None:
                        yield script

    def _filter(self, variants: Iterable[str]) -> hcm_pb2.HttpFilter:
        """The filter holding the shared script's `variants` (by name), in a fixed order."""
        wanted = set(variants)
        config = lua_pb2.Lua()
        for (on_request, on_response), name in SHARED_NAMES.items():
            if name in wanted:
                source = shared_source(on_request, on_response)
                config.source_codes[name].CopyFrom(base_pb2.DataSource(inline_string=source))
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config))

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        script = self._script(vhost.transformations)
        return None if script is None else self._run(script, vhost)

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        if own(route) is None:
            return None  # the virtual host's config applies
        return self._own(own(route), vhost.transformations, vhost)

    def per_weighted_cluster(
        self, vhost: ir.VirtualHost, route: ir.Route, cluster: ir.WeightedCluster
    ) -> Message | None:
        if cluster.transformations is None:
            return None  # the route's (or the virtual host's) config applies
        above = (
            route.transformations if route.transformations is not None else vhost.transformations
        )
        return self._own(cluster.transformations, above, vhost)

    def _own(
        self,
        own: ir.StagedTransformations | None,
        above: ir.StagedTransformations | None,
        vhost: ir.VirtualHost,
    ) -> Message | None:
        script = self._script(own)
        if script is not None:
            return self._run(script, vhost)
        if self._script(above) is not None:
            config: Message = lua_pb2.LuaPerRoute(disabled=True)
            return config
        return None

    def _run(self, script: ir.TransformationScript, vhost: ir.VirtualHost) -> Message:
        """`script` on a route of `vhost`. On a plain listener, its rules in the
        `filter_context`, run by the shared script the config names. A TLS virtual host
        has a chain of its own, and Envoy sends a TLS listener whole whenever one of its
        chains changes: a shared script there would be 35 KB per host in every such
        update (and 40 KiB more of Envoy's memory per host, measured), so its routes carry
        the whole script in the route configuration instead, as before."""
        rules = route_rules(script, self.state)
        config: Message
        if rules.script is None:  # rules that hook nothing do nothing, as the filter disabled
            config = lua_pb2.LuaPerRoute(disabled=True)
        elif vhost.tls is not None:
            source = standalone_source(script, self.state)
            config = lua_pb2.LuaPerRoute(source_code=base_pb2.DataSource(inline_string=source))
        else:
            context = struct_pb2.Struct()
            context.fields[ID_KEY].string_value = rules.digest
            context.fields[RULES_KEY].string_value = rules.source
            config = lua_pb2.LuaPerRoute(name=rules.script, filter_context=context)
        return config

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


EARLY = TransformScript("early")
REGULAR = TransformScript("regular")


def span_name(vhost: ir.VirtualHost, route: ir.Route) -> str | None:
    """The route's tracing span name (`spanTransformer` with a literal name)."""
    staged = effective(vhost, route)
    return staged.span_name if staged is not None else None
