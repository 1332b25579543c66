"""The command line of xDS security: `--xds-certs` and `--insecure-xds` (every command that
serves or dials xDS takes them), the check that a client does not dial plaintext xDS off
loopback, and what `gw certgen` does (gw.certgen, gw.orch.certgen).

Imported by `gw.cli.gw` at start: nothing here loads a component until a command runs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

XdsCerts = Annotated[
    Path | None,
    typer.Option(
        help="xDS over mutual TLS with the certificates in this folder (ca.crt, tls.crt, "
        "tls.key, as `gw certgen` makes them), re-read when they change.",
    ),
]
InsecureXds = Annotated[
    bool,
    typer.Option(
        "--insecure-xds",
        help="Allow plaintext xDS off loopback: whoever reaches it can pose as a proxy.",
    ),
]


def refuse_plaintext(xds: str, certs: Path | None, insecure: bool) -> None:
    """Exit when a client would dial xDS in plaintext off loopback, or its certificates
    cannot be used (gw.xds.tls)."""
    from gw.xds.tls import CertificateFolder, XdsTlsError, plaintext_refusal

    refusal = None if certs is not None or insecure else plaintext_refusal(xds, "dial")
    if certs is not None:
        try:
            CertificateFolder(certs).read()
        except XdsTlsError as exc:
            refusal = str(exc)
    if refusal is not None:
        typer.echo(f"gw: {refusal}", err=True)
        raise typer.Exit(1)


def issue(
    out: Path | None,
    kubeconfig: Path | None,
    namespace: str,
    proxies: tuple[str, ...],
    *,
    rotate_ca: bool,
    validity_days: int,
) -> list[str]:
    """`gw certgen`: issue into the folder `out`, else into the cluster's Secrets; what was
    written."""
    import datetime

    from gw import certgen

    validity = datetime.timedelta(days=validity_days)
    try:
        certgen.parties(namespace, proxies)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if out is not None:
        written = certgen.issue_folder(
            out, namespace, proxies, rotate_ca=rotate_ca, validity=validity
        )
        return [str(path) for path in written]

    async def into_secrets() -> list[str]:
        from gw.orch.certgen import issue_secrets
        from gw.orch.client import connect

        client = connect(kubeconfig)
        try:
            names = await issue_secrets(
                client, namespace, proxies, rotate_ca=rotate_ca, validity=validity
            )
        finally:
            await client.close()
        return [f"secret/{name}" for name in names]

    return asyncio.run(into_secrets())
