"""Which JWT check applies where: the two stages (before and after the extauth filter) of a
virtual host and of its routes.

- A host checks at `jwtStaged.beforeExtAuth`, `jwtStaged.afterExtAuth`, or both (then a
  request needs a token for each); the deprecated `jwt` is `jwtStaged.afterExtAuth`.
- A route's `jwtProvidersStaged.<stage>` replaces the host's check of that stage on that
  route (the host's other stage still applies); `jwtStaged.<stage>.disable: true` (or the
  deprecated `jwt.disable`, the after stage) switches the host's check of the stage off.
  These are the established gateway's rules for the two option levels; a delegated route's
  own options replace its parent's as for every option.
- `jwt`/`jwtStaged` on a host, and `jwt`/`jwtStaged`/`jwtProvidersStaged` on a route, are
  one choice each (one `oneof` in the established API): two of them set is an error.

Provider names in Envoy: `<virtual host>_<provider>` for a host's (both stages), and
`<virtual host>_route<N>_<provider>` for a route's own (N: the route's first position), so
that a route's provider never replaces a host's of the same name. RBAC principals read
claims under those names (`providers`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from gw.api import ResourceKey
from gw.api.jwt import JwtStagedVhost, RouteJwt, VhostJwt
from gw.api.virtualservice import RouteOptions, VirtualHostOptions
from gw.translator import ir
from gw.translator.gateway.jwt import build_jwt, provider_name
from gw.translator.ir.frozen import use_slot_setters
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

Stage = Literal["beforeExtAuth", "afterExtAuth"]
_STAGES: tuple[Stage, ...] = ("beforeExtAuth", "afterExtAuth")
_ATTRS = {"beforeExtAuth": "before_ext_auth", "afterExtAuth": "after_ext_auth"}


@use_slot_setters
@dataclass(frozen=True, slots=True)
class HostJwt:
    """A virtual host's checks per stage and its provider names (API name → Envoy name,
    both stages: a host's RBAC principals read claims of either)."""

    before: ir.JwtVerification | None = None
    after: ir.JwtVerification | None = None
    providers: dict[str, str] = field(default_factory=dict)

    def checks(self, stage: Stage) -> bool:
        return (self.before if stage == "beforeExtAuth" else self.after) is not None


def build_host_jwt(
    options: VirtualHostOptions,
    *,
    field: str,
    vhost_name: str,
    referrer: ResourceKey,
    refs: Refs,
    report: ResourceReport,
) -> HostJwt:
    if options.jwt is not None and options.jwt_staged is not None:
        report.error(
            f"{field}.jwtStaged",
            "set one of jwt and jwtStaged, not both: jwt is the deprecated spelling of "
            "jwtStaged.afterExtAuth",
        )
        return HostJwt()
    stages: dict[Stage, tuple[VhostJwt, str]] = (
        {"afterExtAuth": (options.jwt, f"{field}.jwt")}
        if options.jwt is not None
        else _stages(options.jwt_staged, f"{field}.jwtStaged")
    )
    built: dict[Stage, ir.JwtVerification | None] = {}
    providers: dict[str, str] = {}
    for stage, (config, where) in stages.items():
        built[stage] = build_jwt(
            config, field=where, prefix=vhost_name, referrer=referrer, refs=refs, report=report
        )
        providers.update({p: provider_name(vhost_name, p) for p in config.providers})
    return HostJwt(
        before=built.get("beforeExtAuth"), after=built.get("afterExtAuth"), providers=providers
    )


def _stages(staged: JwtStagedVhost | None, field: str) -> dict[Stage, tuple[VhostJwt, str]]:
    """The stages `staged` (at `field`) sets, each with its field path."""
    out: dict[Stage, tuple[VhostJwt, str]] = {}
    for stage in _STAGES:
        config = getattr(staged, _ATTRS[stage]) if staged is not None else None
        if config is not None:
            out[stage] = (config, f"{field}.{stage}")
    return out


def build_route_jwt(
    options: RouteOptions,
    *,
    field: str,
    host: HostJwt,
    tag: str,
    referrer: ResourceKey,
    refs: Refs,
    report: ResourceReport,
) -> tuple[ir.RouteJwt | None, dict[str, str]]:
    """The route's JWT per stage (None: the host's applies at both) and the provider
    names its RBAC may read (the host's, and the route's own under their names)."""
    chosen = [
        name
        for name, value in (
            ("jwt", options.jwt),
            ("jwtStaged", options.jwt_staged),
            ("jwtProvidersStaged", options.jwt_providers_staged),
        )
        if value is not None
    ]
    if len(chosen) > 1:
        report.error(
            f"{field}.{chosen[1]}",
            f"set one of jwt, jwtStaged and jwtProvidersStaged, not {' and '.join(chosen)}",
        )
        return None, host.providers
    if options.jwt_providers_staged is not None:
        return _own_providers(
            options.jwt_providers_staged,
            field=f"{field}.jwtProvidersStaged",
            prefix=tag,
            referrer=referrer,
            refs=refs,
            report=report,
            host=host,
        )
    disabled: dict[Stage, tuple[RouteJwt, str]] = {}
    if options.jwt is not None:
        disabled["afterExtAuth"] = (options.jwt, f"{field}.jwt")
    elif options.jwt_staged is not None:
        for stage in _STAGES:
            config = getattr(options.jwt_staged, _ATTRS[stage])
            if config is not None:
                disabled[stage] = (config, f"{field}.jwtStaged.{stage}")
    stages = {
        stage: _disabled_stage(config, where, stage, host, report)
        for stage, (config, where) in disabled.items()
    }
    return _route_jwt(stages), host.providers


def _disabled_stage(
    config: RouteJwt, field: str, stage: Stage, host: HostJwt, report: ResourceReport
) -> ir.RouteJwtStage | None:
    if not config.disable:
        return None
    if not host.checks(stage):
        other: Stage = "afterExtAuth" if stage == "beforeExtAuth" else "beforeExtAuth"
        hint = (
            f" (it checks at {other}: use jwtStaged.{other}.disable)" if host.checks(other) else ""
        )
        report.warning(
            f"{field}.disable",
            f"no effect: the virtual host verifies no JWT at {stage}{hint}"
            if hint
            else "no effect: the virtual host verifies no JWT",
        )
        return None
    return ir.RouteJwtStage(disabled=True)


def _own_providers(
    staged: JwtStagedVhost,
    *,
    field: str,
    prefix: str,
    referrer: ResourceKey,
    refs: Refs,
    report: ResourceReport,
    host: HostJwt,
) -> tuple[ir.RouteJwt | None, dict[str, str]]:
    providers = dict(host.providers)
    stages: dict[Stage, ir.RouteJwtStage | None] = {}
    for stage, (config, where) in _stages(staged, field).items():
        verification = build_jwt(
            config, field=where, prefix=prefix, referrer=referrer, refs=refs, report=report
        )
        if verification is not None:
            stages[stage] = ir.RouteJwtStage(verification=verification)
        providers.update({p: provider_name(prefix, p) for p in config.providers})
    if not stages and staged.before_ext_auth is None and staged.after_ext_auth is None:
        report.warning(field, "no effect: set beforeExtAuth or afterExtAuth")
    return _route_jwt(stages), providers


def _route_jwt(stages: dict[Stage, ir.RouteJwtStage | None]) -> ir.RouteJwt | None:
    before, after = stages.get("beforeExtAuth"), stages.get("afterExtAuth")
    if before is None and after is None:
        return None
    return ir.RouteJwt(before_extauth=before, after_extauth=after)
