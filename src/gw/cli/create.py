"""`gwctl create secret tls|oauth|apikey|authcredentials`, `gwctl create upstream
orch|static` and `gwctl create virtualservice`: write a new resource into the install (a
folder install: `<folder>/gwctl-created/<kind>-<ns>-<name>.yaml`).

Every manifest is validated by the same models the control plane uses before it is
written; TLS material is checked like the translator checks it. `--dry-run` prints the
manifest instead, with secret values redacted: gwctl never prints a secret back.
"""

from __future__ import annotations

import base64
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gw.cli.command import AdminUrl, connect, fail, to_yaml, warn
from gw.cli.get import resources_of, upstream_table
from gw.cli.get_routes import virtualservice_table
from gw.cli.install import CONTROLLER_NAMESPACE, Install, InstallError
from gw.cli.tables import render_table

if TYPE_CHECKING:
    from gw import api

# The models and the translator's TLS checks are imported where used: importing them costs
# a few hundred milliseconds that every other gwctl command would pay.

app = typer.Typer(help="Create resources.", no_args_is_help=True)
secret_app = typer.Typer(help="Create secrets.", no_args_is_help=True)
upstream_app = typer.Typer(help="Create upstreams.", no_args_is_help=True)
app.add_typer(secret_app, name="secret")
app.add_typer(upstream_app, name="upstream")
app.add_typer(upstream_app, name="us", hidden=True)

#: Time units of `ratelimitBasic` limits, as the API spells them.
RATE_LIMIT_UNITS = ("SECOND", "MINUTE", "HOUR", "DAY")

Namespace = Annotated[str, typer.Option("-n", "--namespace", help="Namespace of the new resource.")]
DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Print the manifest (secrets redacted), write nothing.")
]

OAUTH_KEY = "client-secret"
APIKEY_KEY = "api-key"
TLS_TYPE = "kubernetes.io/tls"
OAUTH_TYPE = "extauth.vendor.io/oauth"
APIKEY_TYPE = "extauth.vendor.io/apikey"
CREDENTIALS_TYPE = "extauth.vendor.io/accountcredentials"
ENCRYPTION_KEY_TYPE = "gw.vendor.io.EncryptionKeySecret"
#: The length an encryption key must have (AES-256), in bytes.
ENCRYPTION_KEY_BYTES = 32
REDACTED = "<redacted>"


@secret_app.command("tls")
def secret_tls(
    name: Annotated[str, typer.Option("--name", help="Secret name.")],
    certfile: Annotated[
        Path,
        typer.Option(
            "--certfile", "--certchain", exists=True, dir_okay=False, help="PEM certificate chain."
        ),
    ],
    keyfile: Annotated[
        Path,
        typer.Option(
            "--keyfile", "--privatekey", exists=True, dir_okay=False, help="PEM private key."
        ),
    ],
    rootca: Annotated[
        Path | None,
        typer.Option("--rootca", exists=True, dir_okay=False, help="PEM CA certificate(s)."),
    ] = None,
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Create a TLS secret (type kubernetes.io/tls) from a certificate and a private key."""
    from gw import api
    from gw.translator.clock import Clock
    from gw.translator.gateway.secrets import CA_KEY, CERT_KEY, KEY_KEY, check_tls_material
    from gw.translator.reports import ResourceReport

    data = {CERT_KEY: certfile.read_text(), KEY_KEY: keyfile.read_text()}
    if rootca is not None:
        data[CA_KEY] = rootca.read_text()
    manifest = secret_manifest(namespace, name, TLS_TYPE, data)
    secret = parse_manifest(manifest)
    assert isinstance(secret, api.Secret)
    report = ResourceReport()
    check_tls_material(
        secret,
        where=f"{namespace}.{name}",
        field="",
        report=report,
        clock=Clock(),
        require_key=True,
    )
    if report.errors:
        fail("; ".join(e.message for e in report.errors))
    create_resource(
        manifest, dry_run, admin_url, lambda _: render_table(["Secret", "Type"], [[name, "TLS"]])
    )


@secret_app.command("oauth")
def secret_oauth(
    name: Annotated[str, typer.Option("--name", help="Secret name.")],
    client_secret: Annotated[
        str,
        typer.Option(
            "--client-secret",
            help="The client secret; `-` reads it from stdin (keeps it out of shell history).",
        ),
    ] = "",
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Create an OAuth secret (type extauth.vendor.io/oauth) holding a client secret."""
    value = sys.stdin.readline().rstrip("\r\n") if client_secret == "-" else client_secret
    if not value:
        fail("client-secret not provided")
    manifest = secret_manifest(namespace, name, OAUTH_TYPE, {OAUTH_KEY: value})
    create_secret(manifest, "OAuth", dry_run, admin_url)


@secret_app.command("encryptionkey")
def secret_encryptionkey(
    name_argument: Annotated[
        str | None, typer.Argument(metavar="[NAME]", help="Secret name (or --name).")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Secret name.")] = None,
    key: Annotated[
        str,
        typer.Option(
            "--key",
            help="The key, 32 bytes; `-` reads it from stdin (keeps it out of shell history).",
        ),
    ] = "",
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Create an encryption key secret (type gw.vendor.io.EncryptionKeySecret, key `key`):
    the key an OIDC cookie session's `cipherConfig` encrypts its cookies with."""
    secret_name = chosen_name(name, name_argument, "secret", "secret encryptionkey")
    value = sys.stdin.readline().rstrip("\r\n") if key == "-" else key
    if not value:
        fail("The Name or the key is missing for the encryption secret: give --key")
    if len(value.encode()) != ENCRYPTION_KEY_BYTES:
        fail(
            f"The length of the key is not {ENCRYPTION_KEY_BYTES} bytes in length "
            f"(it is {len(value.encode())})"
        )
    manifest = secret_manifest(namespace, secret_name, ENCRYPTION_KEY_TYPE, {"key": value})
    create_secret(manifest, "EncryptionKey", dry_run, admin_url)


@secret_app.command("authcredentials")
def secret_authcredentials(
    name: Annotated[str, typer.Option("--name", help="Secret name.")],
    username: Annotated[str, typer.Option("--username", help="The account (an LDAP DN).")] = "",
    password: Annotated[
        str,
        typer.Option(
            "--password",
            help="The account's password; `-` reads it from stdin (keeps it out of shell history).",
        ),
    ] = "",
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Create account credentials (type extauth.vendor.io/accountcredentials): the service
    account an `ldap` AuthConfig reads group memberships as (`groupLookupSettings`)."""
    value = sys.stdin.readline().rstrip("\r\n") if password == "-" else password
    if not username:
        fail("username not provided")
    if not value:
        fail("password not provided")
    manifest = secret_manifest(
        namespace, name, CREDENTIALS_TYPE, {"username": username, "password": value}
    )
    create_secret(manifest, "AccountCredentials", dry_run, admin_url)


@secret_app.command("apikey")
def secret_apikey(
    name_argument: Annotated[
        str | None, typer.Argument(metavar="[NAME]", help="Secret name (or --name).")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Secret name.")] = None,
    apikey: Annotated[
        str,
        typer.Option(
            "--apikey",
            help="The API key; `-` reads it from stdin (keeps it out of shell history).",
        ),
    ] = "",
    generate: Annotated[
        bool, typer.Option("--apikey-generate", help="Generate a random API key.")
    ] = False,
    labels: Annotated[
        str | None,
        typer.Option("--apikey-labels", help="Labels for apiKeyAuth's labelSelector: k=v,k2=v2."),
    ] = None,
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Create an API key secret (type extauth.vendor.io/apikey, key api-key) for apiKeyAuth.

    A generated key is written into the secret only: gwctl does not print it (read it from
    the created file)."""
    secret_name = chosen_name(name, name_argument, "secret", "secret apikey")
    value = sys.stdin.readline().rstrip("\r\n") if apikey == "-" else apikey
    if not value:
        if not generate:
            fail("ApiKey not provided or generated: give --apikey or --apikey-generate")
        value = secrets.token_urlsafe(32)
    manifest = secret_manifest(namespace, secret_name, APIKEY_TYPE, {APIKEY_KEY: value})
    if labels:
        manifest["metadata"]["labels"] = key_values(labels, "--apikey-labels")
    create_secret(manifest, "ApiKey", dry_run, admin_url)


@upstream_app.command("orch")
def upstream_orch(
    name: Annotated[str, typer.Argument(help="Upstream name.")],
    service: Annotated[str, typer.Option("--orch-service", help="Service name.")],
    service_namespace: Annotated[
        str, typer.Option("--orch-service-namespace", help="Service namespace.")
    ] = "default",
    service_port: Annotated[int, typer.Option("--orch-service-port", help="Service port.")] = 80,
    labels: Annotated[
        str | None,
        typer.Option("--orch-service-labels", help="Pod selector: k=v,k2=v2."),
    ] = None,
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Create an upstream for an orchestrator service."""
    orch: dict[str, Any] = {
        "serviceName": service,
        "serviceNamespace": service_namespace,
        "servicePort": service_port,
    }
    if labels:
        orch["selector"] = key_values(labels, "--orch-service-labels")
    manifest = {
        "apiVersion": "gw.vendor.io/v1",
        "kind": "Upstream",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"orch": orch},
    }
    parse_manifest(manifest)
    create_resource(
        manifest, dry_run, admin_url, lambda i: status_table(i, manifest, upstream_table)
    )


@upstream_app.command("static")
def upstream_static(
    name_argument: Annotated[
        str | None, typer.Argument(metavar="[NAME]", help="Upstream name (or --name).")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Upstream name.")] = None,
    hosts: Annotated[
        str,
        typer.Option(
            "--static-hosts", help="HOST:PORT,... (names or addresses; the port defaults to 80)."
        ),
    ] = "",
    outbound_tls: Annotated[
        bool | None,
        typer.Option(
            "--static-outbound-tls/--no-static-outbound-tls",
            help="Connect to the hosts with TLS (default: only when a host's port is 443).",
        ),
    ] = None,
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Create an upstream for fixed hosts (names or addresses), balanced round robin."""
    upstream_name = chosen_name(name, name_argument, "upstream", "upstream static")
    static: dict[str, Any] = {"hosts": static_hosts(hosts)}
    if outbound_tls is not None:
        static["useTls"] = outbound_tls
    manifest = {
        "apiVersion": "gw.vendor.io/v1",
        "kind": "Upstream",
        "metadata": {"name": upstream_name, "namespace": namespace},
        "spec": {"static": static},
    }
    parse_manifest(manifest)
    create_resource(
        manifest, dry_run, admin_url, lambda i: status_table(i, manifest, upstream_table)
    )


def static_hosts(text: str) -> list[dict[str, Any]]:
    """`--static-hosts`: `host`, `host:port` or `[v6-address]:port`, comma-separated."""
    out: list[dict[str, Any]] = []
    for item in (i.strip() for i in text.split(",")):
        if not item:
            continue
        if item.startswith("["):
            addr, _, rest = item[1:].partition("]")
            port_text = rest.removeprefix(":") if rest.startswith(":") else None
            if rest and port_text is None:
                fail(f"--static-hosts: {item!r} is not [ADDRESS]:PORT")
        elif item.count(":") == 1:
            addr, port_text = item.split(":")
        elif ":" in item:
            fail(f"--static-hosts: write an IPv6 address in brackets: [{item}]:PORT")
        else:
            addr, port_text = item, None
        if not port_text:
            port = 80
        elif port_text.isdigit() and 0 < int(port_text) < 65536:
            port = int(port_text)
        else:
            fail(f"--static-hosts: invalid port {port_text!r} in {item!r}")
        out.append({"addr": addr, "port": port})
    if not out:
        fail("must provide at least 1 host for static upstream (--static-hosts HOST:PORT,...)")
    return out


@app.command("virtualservice")
@app.command("vs", hidden=True)
def virtualservice(
    name_argument: Annotated[
        str | None, typer.Argument(metavar="[NAME]", help="Virtual service name (or --name).")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Virtual service name.")] = None,
    domains: Annotated[
        str, typer.Option("--domains", help="Domains it serves: d1,d2 (default: *).")
    ] = "",
    display_name: Annotated[
        str, typer.Option("--display-name", help="Descriptive name (default: the name).")
    ] = "",
    rate_limiting: Annotated[
        bool,
        typer.Option("--enable-rate-limiting", help="Limit each client address (ratelimitBasic)."),
    ] = False,
    rate_limit_requests: Annotated[
        int, typer.Option("--rate-limit-requests", min=1, help="Requests per time unit.")
    ] = 100,
    rate_limit_unit: Annotated[
        str,
        typer.Option("--rate-limit-time-unit", help="SECOND, MINUTE, HOUR or DAY."),
    ] = "MINUTE",
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Create a virtual service (no routes yet: add them with `gwctl add route`)."""
    vs_name = chosen_name(name, name_argument, "virtual service", "virtualservice")
    virtual_host: dict[str, Any] = {
        "domains": [d.strip() for d in domains.split(",") if d.strip()] or ["*"]
    }
    if rate_limiting:
        if rate_limit_unit not in RATE_LIMIT_UNITS:
            fail(
                f"invalid time unit specified: {rate_limit_unit} "
                f"(one of {', '.join(RATE_LIMIT_UNITS)})"
            )
        limit = {"unit": rate_limit_unit, "requestsPerUnit": rate_limit_requests}
        virtual_host["options"] = {"ratelimitBasic": {"anonymousLimits": limit}}
    manifest = {
        "apiVersion": "gateway.vendor.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": vs_name, "namespace": namespace},
        "spec": {"displayName": display_name or vs_name, "virtualHost": virtual_host},
    }
    parse_manifest(manifest)
    create_resource(
        manifest,
        dry_run,
        admin_url,
        lambda i: status_table(i, manifest, virtualservice_table),
    )


def create_secret(
    manifest: dict[str, Any], shown_type: str, dry_run: bool, admin_url: str | None
) -> None:
    """Check a secret's manifest with the control plane's models, write it (or print it,
    redacted, for --dry-run), and print its `SECRET | TYPE` table."""
    parse_manifest(manifest)
    name = manifest["metadata"]["name"]
    create_resource(
        manifest,
        dry_run,
        admin_url,
        lambda _: render_table(["Secret", "Type"], [[name, shown_type]]),
    )


def secret_manifest(namespace: str, name: str, kind: str, values: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": kind,
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in values.items()},
    }


def chosen_name(option: str | None, argument: str | None, what: str, command: str) -> str:
    """NAME, given as an argument or with --name (the established tool takes either)."""
    chosen = option or argument
    if not chosen:
        fail(f"name the {what}: gwctl create {command} NAME (or --name NAME)")
    return chosen


def parse_manifest(manifest: dict[str, Any]) -> api.Resource:
    """The manifest, validated by the models the control plane uses."""
    from gw import api

    try:
        return api.parse_document(manifest)
    except api.ManifestError as exc:
        fail(exc.details())


def key_values(text: str, option: str) -> dict[str, str]:
    out = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"{option}: {item!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


def create_resource(
    manifest: dict[str, Any],
    dry_run: bool,
    admin_url: str | None,
    table: Any,
) -> None:
    """Write `manifest` (or print it for --dry-run), then print `table(install)`."""
    if dry_run:
        typer.echo(to_yaml(_redacted(manifest)), nl=False)
        return
    install = connect(admin_url)
    meta = manifest["metadata"]
    where = _existing(install, manifest["kind"], meta["namespace"], meta["name"])
    if where is not None:
        fail(f"{manifest['kind']} {meta['namespace']}.{meta['name']} already exists (in {where})")
    try:
        path = install.write_manifest(manifest, to_yaml(manifest))
    except (InstallError, OSError) as exc:
        fail(f"cannot write the manifest: {exc}")
    warn(f"created {manifest['kind']} {meta['namespace']}.{meta['name']} in {path}")
    typer.echo(table(install))


def _existing(install: Install, kind: str, namespace: str, name: str) -> str | None:
    try:
        inputs = install.admin("/statuses")["inputs"]
    except InstallError as exc:
        fail(str(exc))
    for item in inputs:
        if (item["kind"], item["namespace"], item["name"]) == (kind, namespace, name):
            return str(item.get("source") or "the install")
    return None


def status_table(
    install: Install, manifest: dict[str, Any], table: Callable[[list[dict[str, Any]]], str]
) -> str:
    """The resource's table, once the control plane has read the resource as written and
    given it a status (it picks a file up within milliseconds); `Pending` if it has not
    within 5 s."""
    from gw.cli.apply import comparable

    meta = manifest["metadata"]
    shown = parse_manifest(manifest).model_dump(by_alias=True, exclude_none=True, mode="json")
    expected = comparable(shown)
    deadline = time.monotonic() + 5
    while True:
        found = [
            r
            for r in resources_of(install, manifest["kind"], meta["name"], missing_ok=True)
            if r["metadata"].get("namespace") == meta["namespace"]
            and "status" in r
            and comparable(r) == expected
        ]
        if found or time.monotonic() > deadline:
            return table(found or [manifest])
        time.sleep(0.1)


def _redacted(manifest: dict[str, Any]) -> dict[str, Any]:
    if manifest["kind"] != "Secret":
        return manifest
    return {**manifest, "data": {k: REDACTED for k in manifest["data"]}}
