r"""`gwctl edit virtualservice`: set or remove a virtual service's TLS (`sslConfig`) from the
command line, as the established tool's TLS guides do after `create secret tls`:

    gwctl edit virtualservice --name default --ssl-secret-name gateway-tls \
        --ssl-secret-namespace default

Like `add route`, it changes the stored manifest (`add_route.resource_to_change`) and prints
the virtual service's table with the status the control plane gives it.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gw.cli.add_route import DryRun, Namespace, apply_change, resource_to_change
from gw.cli.command import AdminUrl, connect, fail
from gw.cli.install import CONTROLLER_NAMESPACE

app = typer.Typer(help="Change part of a resource.", no_args_is_help=True)


@app.command("virtualservice")
@app.command("vs", hidden=True)
def virtualservice(
    name_argument: Annotated[
        str | None, typer.Argument(metavar="[NAME]", help="The virtual service (or --name).")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="The virtual service.")] = None,
    secret_name: Annotated[
        str, typer.Option("--ssl-secret-name", help="The TLS secret it serves with.")
    ] = "",
    secret_namespace: Annotated[
        str, typer.Option("--ssl-secret-namespace", help="The TLS secret's namespace.")
    ] = "",
    sni_domains: Annotated[
        list[str] | None,
        typer.Option("--ssl-sni-domains", help="SNI names it answers for (repeat the option)."),
    ] = None,
    remove: Annotated[
        bool, typer.Option("--ssl-remove", help="Remove its TLS configuration.")
    ] = False,
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Set (or, with --ssl-remove, remove) a virtual service's TLS: its secret and SNI names.
    The other fields of its sslConfig are kept."""
    vs_name = name or name_argument
    if not vs_name:
        fail("name the virtual service: gwctl edit virtualservice NAME (or --name NAME)")
    if secret_namespace and not secret_name:
        fail("name must be provided: give --ssl-secret-name with --ssl-secret-namespace")
    install = connect(admin_url)
    manifest = resource_to_change(install, "VirtualService", namespace, vs_name, create=False)
    spec = manifest.setdefault("spec", {})
    spec.pop("sslConfig", None) if remove else _set_ssl(
        spec, secret_name, secret_namespace, sni_domains
    )
    apply_change(install, manifest, dry_run)


def _set_ssl(
    spec: dict[str, Any], secret_name: str, secret_namespace: str, sni_domains: list[str] | None
) -> None:
    ssl = spec.get("sslConfig") or {}
    if secret_name:
        ref = {"name": secret_name} | ({"namespace": secret_namespace} if secret_namespace else {})
        ssl = {k: v for k, v in ssl.items() if k != "sslFiles"} | {"secretRef": ref}
    if sni_domains is not None:
        ssl["sniDomains"] = sni_domains
    if ssl:
        spec["sslConfig"] = ssl
    else:
        spec.pop("sslConfig", None)
