"""`sslConfig` on a VirtualService → TLS termination on the HTTPS listener.

A VirtualService with `sslConfig.secretRef` is served on the HTTPS listener only, in a filter
chain of its own chosen by SNI: `sslConfig.sniDomains`, or else the virtual host's domains
(`*.example.com` wildcards as Envoy matches them; `*` makes it the default chain, for clients
whose SNI no other chain claims or who send none). Everything Envoy would refuse is found
here and reported on the VirtualService instead: a bad secret, an SNI name Envoy cannot
match, an unknown cipher, two virtual services claiming one SNI name.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from operator import itemgetter

from gw import api
from gw.api import ResourceKey, ResourceRef
from gw.api.duration import duration_ms
from gw.api.tls import SslConfig
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.clock import Clock
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.secrets import resolve_tls_secret
from gw.translator.gateway.tls_parameters import check_parameters
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

FIELD = "spec.sslConfig"
#: The SNI claim of a default chain.
ANY_SNI = "*"
DEFAULT_ALPN = ("h2", "http/1.1")
#: `alpnProtocols: [allow_empty]` offers no ALPN at all (established spelling).
NO_ALPN = "allow_empty"
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_SERVER_NAME = re.compile(rf"^(?:\*\.)?{_LABEL}(?:\.{_LABEL})*$")


def build_tls(
    vs: api.VirtualService,
    domains: tuple[str, ...],
    snapshot: Snapshot,
    refs: Refs,
    report: ResourceReport,
    clock: Clock,
) -> tuple[ir.TlsTermination, ir.TlsSecret] | None:
    """The TLS termination of `vs` and the secret it serves, or None after reporting why."""
    ssl = vs.spec.ssl_config
    assert ssl is not None
    return build_termination(ssl, vs.key, domains, snapshot, refs, report, clock)


def build_termination(
    ssl: SslConfig,
    owner: ResourceKey,
    domains: tuple[str, ...],
    snapshot: Snapshot,
    refs: Refs,
    report: ResourceReport,
    clock: Clock,
    field: str = FIELD,
) -> tuple[ir.TlsTermination, ir.TlsSecret] | None:
    """TLS terminated with `ssl` (at `field` of `owner`): its SNI names are `sniDomains`,
    else `domains` (a virtual host's); none at all makes it the default chain."""
    errors = len(report.errors)
    if ssl.ssl_files is not None:
        report.error(
            f"{field}.sslFiles",
            "sslFiles is not supported: the proxy would read files the control plane cannot "
            "check; put the certificate and key in a TLS secret and use sslConfig.secretRef",
        )
    if ssl.ocsp_staple_policy not in (None, "LENIENT_STAPLING"):
        report.error(
            f"{field}.ocspStaplePolicy",
            f"{ssl.ocsp_staple_policy} is not supported: gw serves no OCSP staples yet; "
            "leave ocspStaplePolicy unset",
        )
    secret = None
    if ssl.secret_ref is None:
        if ssl.ssl_files is None:
            report.error(
                f"{field}.secretRef",
                "sslConfig needs secretRef: the TLS secret holding the certificate and key",
            )
    else:
        secret = _secret(owner, ssl.secret_ref, snapshot, refs, report, clock, field)
    server_names = _server_names(ssl, domains, report, field)
    termination = _termination(ssl, secret, server_names, report, field)
    if len(report.errors) > errors or secret is None or termination is None:
        return None
    return termination, secret


def _secret(
    owner: ResourceKey,
    ref: ResourceRef,
    snapshot: Snapshot,
    refs: Refs,
    report: ResourceReport,
    clock: Clock,
    ssl_field: str,
) -> ir.TlsSecret | None:
    field = f"{ssl_field}.secretRef"
    key = refs.key(api.Secret, ref, owner)
    unreadable = [e for e in snapshot.errors if e.key == key and key not in snapshot.resources]
    if unreadable:
        # Secrets have no status of their own: say here why this one cannot be used.
        refs.link(owner, field, key)
        report.error(
            field,
            f"the secret {key.namespace}.{key.name} cannot be read ({unreadable[0]}); "
            "fix its manifest",
        )
        return None
    return resolve_tls_secret(
        ref, refs=refs, referrer=owner, field=field, report=report, clock=clock
    )


def _termination(
    ssl: SslConfig,
    secret: ir.TlsSecret | None,
    server_names: tuple[str, ...],
    report: ResourceReport,
    field: str,
) -> ir.TlsTermination | None:
    has_ca = secret is not None and secret.ca is not None
    if ssl.verify_subject_alt_name and secret is not None and not has_ca:
        report.error(
            f"{field}.verifySubjectAltName",
            "a root_ca must be provided if verify_subject_alt_name is not empty: "
            "add ca.crt to the TLS secret",
        )
    # oneWayTls is server-only TLS, as in the established gateway: clients are not asked
    # for a certificate, so the CA and the names to check have nothing to verify.
    checks_clients = has_ca and not ssl.one_way_tls
    if ssl.one_way_tls and ssl.verify_subject_alt_name and has_ca:
        report.warning(
            f"{FIELD}.verifySubjectAltName",
            "no effect with oneWayTls: true: clients are not asked for a certificate, so "
            "there are no names to check; set oneWayTls: false to require client "
            "certificates with these names, or remove verifySubjectAltName",
        )
    for i, protocol in enumerate(ssl.alpn_protocols):
        if not 0 < len(protocol.encode()) < 256:
            report.error(f"{field}.alpnProtocols[{i}]", "an ALPN protocol name has 1 to 255 bytes")
    timeout_ms = None
    if ssl.transport_socket_connect_timeout is not None:
        try:
            timeout_ms = round(duration_ms(ssl.transport_socket_connect_timeout))
        except ValueError as exc:
            report.error(f"{field}.transportSocketConnectTimeout", str(exc))
    params = check_parameters(ssl.parameters, report, f"{field}.parameters")
    if secret is None or params is None:
        return None
    minimum, maximum, ciphers, curves = params
    return ir.TlsTermination(
        server_names=server_names,
        secret=secret.name,
        # The established default: a secret with ca.crt means client certificates are
        # required (mutual TLS), unless oneWayTls turns them off.
        validate_clients=checks_clients,
        require_client_certificate=checks_clients,
        verify_subject_alt_names=tuple(ssl.verify_subject_alt_name) if checks_clients else (),
        alpn_protocols=_alpn(ssl.alpn_protocols),
        minimum_version=minimum,
        maximum_version=maximum,
        cipher_suites=ciphers,
        ecdh_curves=curves,
        disable_session_resumption=bool(ssl.disable_tls_session_resumption),
        handshake_timeout_ms=timeout_ms,
    )


def _server_names(
    ssl: SslConfig, domains: tuple[str, ...], report: ResourceReport, ssl_field: str = FIELD
) -> tuple[str, ...]:
    """The SNI names selecting this chain; () for the default chain."""
    given = bool(ssl.sni_domains)
    field = f"{ssl_field}.sniDomains" if given else "spec.virtualHost.domains"
    names: list[str] = []
    for i, raw in enumerate(ssl.sni_domains if given else domains):
        # A Host header may carry a port; SNI never does.
        name = raw.strip().lower() if given else re.sub(r":\d+$", "", raw)
        where = f"{field}[{i}]"
        if name != ANY_SNI and not _SERVER_NAME.match(name):
            hint = "" if given else "; list the SNI names in sslConfig.sniDomains"
            report.error(
                where,
                f"{raw!r} cannot select a certificate by SNI: use a host name, "
                f"*.<domain> or *{hint}",
            )
        elif name not in names:
            names.append(name)
    if ANY_SNI in names:
        others = [n for n in names if n != ANY_SNI]
        if others:
            report.warning(
                field,
                f"'*' already selects this certificate for every SNI no other virtual service "
                f"claims; [{' '.join(others)}] add nothing",
            )
        return ()
    return tuple(names)


def server_name_problem(name: str) -> str | None:
    """Why `name` cannot be an SNI name a filter chain matches; None when it can."""
    if _SERVER_NAME.match(name):
        return None
    return f"{name!r} cannot select a filter chain by SNI: use a host name or *.<domain>"


def sni_names(domains: list[str], field: str, report: ResourceReport) -> tuple[str, ...]:
    """SNI names to match (`*`, any name, is the same as none)."""
    out: list[str] = []
    for i, raw in enumerate(domains):
        name = raw.strip().lower()
        if name == ANY_SNI:
            continue
        problem = server_name_problem(name)
        if problem is not None:
            report.error(f"{field}[{i}]", problem)
        elif name not in out:
            out.append(name)
    return tuple(out)


def _alpn(protocols: list[str]) -> tuple[str, ...]:
    if not protocols:
        return DEFAULT_ALPN
    if protocols == [NO_ALPN]:
        return ()
    return tuple(protocols)


def sni_claims(vhost: ir.VirtualHost) -> tuple[str, ...]:
    """The SNI names a TLS virtual host holds on the HTTPS listener (`*`: the default)."""
    if vhost.tls is None:
        return ()
    return vhost.tls.server_names or (ANY_SNI,)


def check_sni_conflicts(built: Mapping[ResourceKey, Contribution], reports: Reports) -> None:
    """Two TLS virtual services may not claim one SNI name (Envoy would refuse the listener
    for overlapping filter chains): both are rejected, each naming the other."""
    claims: dict[tuple[str, str], list[ResourceKey]] = defaultdict(list)
    # Per listener (role): gateways.py placed the hosts. Only the TLS ones are sorted by
    # resource (most hosts are plain; the sort is stable, a resource's hosts keep their order).
    placed = [
        (key, role, vhost)
        for key, contribution in built.items()
        for role, vhost in contribution.virtual_hosts
        if vhost.tls is not None
    ]
    for key, role, vhost in sorted(placed, key=itemgetter(0)):
        for name in sni_claims(vhost):
            claims[(role, name)].append(key)
    shared: dict[ResourceKey, dict[str, set[ResourceKey]]] = defaultdict(dict)
    for (_, name), keys in claims.items():
        if len(keys) > 1:
            for key in keys:
                shared[key].setdefault(name, set()).update(k for k in keys if k != key)
    for key, names in shared.items():
        others = sorted({k for ks in names.values() for k in ks})
        reports.of(key).error(
            f"{FIELD}.sniDomains",
            f"gateway has conflicting sni domains [{' '.join(sorted(names))}]: virtual service "
            f"{', '.join(f'{k.namespace}.{k.name}' for k in others)} claims them too; "
            "give each TLS virtual service its own sslConfig.sniDomains",
        )
