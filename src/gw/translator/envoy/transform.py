"""Request transformations → two Envoy filters per stage, all native C++ on the request path.

A stage is `header_to_metadata` (`<stage>.extract`) followed by `header_mutation`
(`<stage>.headers`):

1. `extract` reads, before anything of the stage changes the request, every value a
   template uses into the dynamic metadata namespace `gw.transform.<stage>`: each extractor
   through `regex_value_rewrite` (RE2, the regex wrapped so that it always matches and a
   value that does not match yields an empty group, hence no metadata: header_to_metadata
   stores the whole value when the regex does not match), and each `{{ header("x") }}` as
   the header's whole value.
2. `headers` removes `headersToRemove`, then for each templated header removes every copy
   (a client cannot smuggle in a value when nothing is extracted) and sets the rendered
   value (`%DYNAMIC_METADATA(...)%` for references; an empty result adds nothing), then
   appends `headersToAppend`.

Configs are per route (the route's own transformations, else its virtual host's); the
listener-level filters have no rules. Early filters come first in the chain, regular ones
after authentication (`filters.HTTP_FILTERS`).
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from typing import Literal

from envoy.config.common.mutation_rules.v3 import mutation_rules_pb2
from envoy.config.core.v3 import base_pb2
from envoy.extensions.filters.http.header_mutation.v3 import header_mutation_pb2
from envoy.extensions.filters.http.header_to_metadata.v3 import header_to_metadata_pb2 as h2m_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.type.matcher.v3 import regex_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack
from gw.translator.regex import full_match, full_match_or_anything

Stage = Literal["early", "regular"]
_Value = base_pb2.HeaderValueOption


def own(route: ir.Route) -> ir.StagedTransformations | None:
    """A route's own transformations: those of its only destination when that has its own
    (a split of one is served as a plain route), else the route's."""
    action = route.action
    if isinstance(action, ir.Forward) and len(action.clusters) == 1:
        if action.clusters[0].transformations is not None:
            return action.clusters[0].transformations
    return route.transformations


def effective(vhost: ir.VirtualHost, route: ir.Route) -> ir.StagedTransformations | None:
    """A route's own transformations replace its host's."""
    found = own(route)
    return found if found is not None else vhost.transformations


def stage_of(staged: ir.StagedTransformations | None, stage: Stage) -> ir.Stage | None:
    if staged is None:
        return None
    return staged.early if stage == "early" else staged.regular


def stage_transformation(
    vhost: ir.VirtualHost, route: ir.Route, stage: Stage
) -> ir.Transformation | None:
    """What Envoy's header filters do in `stage` on `route` (None when a script does it)."""
    found = stage_of(effective(vhost, route), stage)
    return found if isinstance(found, ir.Transformation) else None


def carries_transformations(route: ir.Route) -> bool:
    """Whether `route` or one of its clusters has transformations of its own (most have
    none: their host's apply)."""
    if route.transformations is not None:
        return True
    if isinstance(route.action, ir.Forward):
        for cluster in route.action.clusters:  # a loop: asked for every route, eight times
            if cluster.transformations is not None:
                return True
    return False


def weighted_clusters(route: ir.Route) -> list[ir.WeightedCluster]:
    """The clusters of `route` that carry their own transformations."""
    if not isinstance(route.action, ir.Forward) or len(route.action.clusters) < 2:
        return []
    return [c for c in route.action.clusters if c.transformations is not None]


def _reads(t: ir.Transformation) -> bool:
    return bool(t.extractors) or bool(_header_refs(t))


def _writes(t: ir.Transformation) -> bool:
    return bool(
        t.headers_to_remove
        or t.headers
        or t.headers_to_append
        or t.response_headers_to_remove
        or t.response_headers
        or t.response_headers_to_append
    )


def _header_refs(t: ir.Transformation) -> list[str]:
    refs = {
        part.header
        for template in (*t.headers, *t.headers_to_append)
        for part in template.parts
        if isinstance(part, ir.RequestHeaderRef)
    }
    return sorted(refs)


def _header_key(header: str) -> str:
    """The metadata key of a whole header value: `@name`, and `@@path` for `:path`
    (`%DYNAMIC_METADATA%` paths cannot hold a `:`). `@` is not a header-name character, so
    these never meet an extractor's name or each other."""
    return "@@" + header[1:] if header.startswith(":") else "@" + header


class _StageFilter(abc.ABC):
    step: str

    def __init__(self, stage: Stage) -> None:
        self.stage = stage
        self.name = names.transform_filter(stage, self.step)
        self.namespace = names.transform_metadata(stage)

    @abc.abstractmethod
    def needed(self, t: ir.Transformation) -> bool:
        """Whether this filter has work on a route where the stage does `t`."""

    @abc.abstractmethod
    def typed_config(self) -> Message:
        """The listener-level config: no rules (the rules are per route)."""

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        for vhost in vhosts:
            inherited = self._does_work(stage_of(vhost.transformations, self.stage))
            for route in vhost.routes:
                if not carries_transformations(route):
                    found = inherited  # the host's stage is the route's
                else:
                    stages = [stage_transformation(vhost, route, self.stage)] + [
                        stage_of(c.transformations, self.stage) for c in weighted_clusters(route)
                    ]
                    found = any(self._does_work(t) for t in stages)
                if found:
                    return hcm_pb2.HttpFilter(
                        name=self.name, typed_config=pack(self.typed_config())
                    )
        return None

    def _does_work(self, stage: ir.Stage | None) -> bool:
        return isinstance(stage, ir.Transformation) and self.needed(stage)

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        if vhost.transformations is None and not carries_transformations(route):
            return self.config_for(None)  # nothing transformed (most routes)
        if weighted_clusters(route):
            return None  # on each weighted cluster instead (see per_weighted_cluster)
        return self.config_for(stage_transformation(vhost, route, self.stage))

    def per_weighted_cluster(
        self, vhost: ir.VirtualHost, route: ir.Route, cluster: ir.WeightedCluster
    ) -> Message | None:
        """A cluster's own stage, else the route's. header_mutation applies the configs of
        every level (cluster, route, virtual host), not the most specific one only, so when
        some cluster has its own, the route's moves down onto the clusters without."""
        if cluster.transformations is None:
            found = stage_transformation(vhost, route, self.stage)
        else:
            own = stage_of(cluster.transformations, self.stage)
            found = own if isinstance(own, ir.Transformation) else None
        return self.config_for(found)

    @abc.abstractmethod
    def config_for(self, t: ir.Transformation | None) -> Message | None:
        """The per-route config doing `t`, or None when there is nothing to do."""

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        return None

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


class TransformExtract(_StageFilter):
    """`header_to_metadata`: the values a stage's templates use, read as the stage begins."""

    step = "extract"

    def needed(self, t: ir.Transformation) -> bool:
        return _reads(t)

    def typed_config(self) -> Message:
        config: Message = h2m_pb2.Config()
        return config

    def config_for(self, t: ir.Transformation | None) -> Message | None:
        if t is None or not _reads(t):
            return None
        rules = [self._extractor_rule(e) for e in t.extractors]
        rules += [self._header_rule(h) for h in _header_refs(t)]
        config: Message = h2m_pb2.Config(request_rules=rules)
        return config

    def _extractor_rule(self, extractor: ir.Extractor) -> h2m_pb2.Config.Rule:
        if extractor.mode == "extract":
            pattern, group = full_match_or_anything(extractor.regex, extractor.subgroup)
            substitution = f"\\{group}"
        else:
            pattern = (
                full_match(extractor.regex)
                if extractor.mode == "single_replace"
                else extractor.regex
            )
            substitution = "".join(
                f"\\{p}" if isinstance(p, int) else p.replace("\\", "\\\\")
                for p in extractor.replacement
            )
        pair = self._pair(extractor.name)
        pair.regex_value_rewrite.CopyFrom(
            regex_pb2.RegexMatchAndSubstitute(
                pattern=regex_pb2.RegexMatcher(regex=pattern), substitution=substitution
            )
        )
        return h2m_pb2.Config.Rule(header=extractor.header, on_header_present=pair)

    def _header_rule(self, header: str) -> h2m_pb2.Config.Rule:
        return h2m_pb2.Config.Rule(header=header, on_header_present=self._pair(_header_key(header)))

    def _pair(self, key: str) -> h2m_pb2.Config.KeyValuePair:
        return h2m_pb2.Config.KeyValuePair(
            metadata_namespace=self.namespace, key=key, type=h2m_pb2.Config.STRING
        )


class TransformHeaders(_StageFilter):
    """`header_mutation`: a stage's header removals, replacements and appends, in order."""

    step = "headers"

    def needed(self, t: ir.Transformation) -> bool:
        return _writes(t)

    def typed_config(self) -> Message:
        config: Message = header_mutation_pb2.HeaderMutation()
        return config

    def config_for(self, t: ir.Transformation | None) -> Message | None:
        if t is None or not _writes(t):
            return None
        config: Message = header_mutation_pb2.HeaderMutationPerRoute(
            mutations=header_mutation_pb2.Mutations(
                request_mutations=self._mutations(
                    t.headers_to_remove, t.headers, t.headers_to_append, response=False
                ),
                response_mutations=self._mutations(
                    t.response_headers_to_remove,
                    t.response_headers,
                    t.response_headers_to_append,
                    response=True,
                ),
            )
        )
        return config

    def _mutations(
        self,
        removed: Sequence[str],
        headers: Sequence[ir.HeaderTemplate],
        appended: Sequence[ir.HeaderTemplate],
        *,
        response: bool,
    ) -> list[mutation_rules_pb2.HeaderMutation]:
        mutations = [mutation_rules_pb2.HeaderMutation(remove=name) for name in removed]
        for header in headers:
            mutations.append(mutation_rules_pb2.HeaderMutation(remove=header.name))
            mutations.append(self._append(header, _Value.OVERWRITE_IF_EXISTS_OR_ADD, response))
        for header in appended:
            mutations.append(self._append(header, _Value.APPEND_IF_EXISTS_OR_ADD, response))
        return mutations

    def _append(
        self, header: ir.HeaderTemplate, action: int, response: bool
    ) -> mutation_rules_pb2.HeaderMutation:
        value = "".join(self._format(part, response) for part in header.parts)
        return mutation_rules_pb2.HeaderMutation(
            append=_Value(
                header=base_pb2.HeaderValue(key=header.name, value=value),
                append_action=action,
            )
        )

    def _format(self, part: str | ir.ExtractorRef | ir.RequestHeaderRef, response: bool) -> str:
        """A part as Envoy's header formatter takes it. On a response, a request header is
        `%REQ(...)%`: the request as it was sent upstream."""
        if isinstance(part, ir.ExtractorRef):
            return f"%DYNAMIC_METADATA({self.namespace}:{part.extractor})%"
        if isinstance(part, ir.RequestHeaderRef):
            if response:
                return f"%REQ({part.header})%"
            return f"%DYNAMIC_METADATA({self.namespace}:{_header_key(part.header)})%"
        return part.replace("%", "%%")


EARLY = (TransformExtract("early"), TransformHeaders("early"))
REGULAR = (TransformExtract("regular"), TransformHeaders("regular"))
