"""`gwctl explain METHOD URL [-H 'Name: value' ...] [--cookie ...] [--from IP] [--sni NAME]
[--send]`: what the proxy does with a request, and why.

The answer comes from what the control plane serves the proxy, fetched over xDS as
`gwctl proxy served-config` fetches it, and the Proxy it built (where each route was
written); a folder install's files give the lines. `gw.explain` works it out. With `--send`
the request then goes through the proxy, and what happened is shown next to the prediction;
the exit status is 1 when they differ.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

from gw.cli.command import (
    DEFAULT_NAMESPACE,
    DEFAULT_PROXY,
    AdminUrl,
    DataOutput,
    Namespace,
    ProxyName,
    connect,
    emit,
    fail,
)
from gw.cli.install import Install, InstallError
from gw.probe import Sent


def explain_command(
    method: Annotated[str, typer.Argument(help="GET, POST, ...")],
    url: Annotated[str, typer.Argument(help="http(s)://host[:port]/path?query")],
    header: Annotated[
        list[str] | None, typer.Option("-H", "--header", help="'Name: value' (repeatable).")
    ] = None,
    cookie: Annotated[
        list[str] | None, typer.Option("--cookie", help="'name=value' (repeatable).")
    ] = None,
    source: Annotated[
        str | None, typer.Option("--from", help="The client's IP address (default 127.0.0.1).")
    ] = None,
    sni: Annotated[
        str | None, typer.Option("--sni", help="TLS server name (default: the URL's host).")
    ] = None,
    send: Annotated[
        bool, typer.Option("--send", help="Also send it through the proxy and compare.")
    ] = False,
    output: Annotated[DataOutput | None, typer.Option("-o", "--output")] = None,
    name: ProxyName = DEFAULT_PROXY,
    namespace: Namespace = DEFAULT_NAMESPACE,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the xDS server.")] = 5.0,
    admin_url: AdminUrl = None,
) -> None:
    """Explain what the proxy does with a request: listener, virtual host, route, filters,
    and the upstream it goes to or the answer it gets."""
    from gw.cli import explain_text
    from gw.explain.explainer import explain
    from gw.explain.listeners import choose_port
    from gw.explain.request import Request, RequestError

    try:
        request = Request.parse(
            method, url, header or [], cookies=cookie or [], source_ip=source, sni=sni
        )
    except RequestError as exc:
        fail(str(exc))
    install = connect(admin_url)
    served = served_for(install, name, namespace, timeout)
    proxy_port = _proxy_port(install, name, namespace, request.scheme)
    port, note = choose_port(served, request, proxy_port)
    if port is None:
        fail(note)
    explanation = explain(served, request, port=port, now=time.time())
    sent = send_request(install, name, namespace, request, port) if send else None
    differs = sent is not None and explain_text.difference(explanation, sent) is not None
    if output is not None:
        emit(_as_data(explanation, port, note, sent, differs), output)
    else:
        typer.echo(explain_text.render(explanation, note, sent))
    if differs:
        raise typer.Exit(1)


def _as_data(
    explanation: Any, port: int, note: str, sent: Sent | None, differs: bool
) -> dict[str, Any]:
    data: dict[str, Any] = {"port": port, **explanation.to_data()}
    if note:
        data["notes"] = [note, *data["notes"]]
    if sent is not None:
        data["sent"] = {
            "status": sent.status,
            "headers": dict(sent.headers),
            "body": sent.body,
            "upstream": sent.upstream,
            "error": sent.error,
            "matchesPrediction": not differs,
        }
    return data


def served_for(install: Install, name: str, namespace: str, timeout: float) -> Any:
    """The proxy role's served configuration, with where its routes were written."""
    from gw.cli import served_config
    from gw.explain.served import Served, sources_from_proxy

    role = f"{namespace}~{name}"
    try:
        with install.xds_address() as xds:
            received = served_config.fetch_messages(xds, role, timeout)
        proxies = install.admin("/snapshots/proxies")
        statuses = install.admin("/statuses")
    except (InstallError, served_config.ServedConfigError) as exc:
        fail(str(exc))
    proxy: dict[str, Any] = next(
        (p for p in proxies if (p.get("name"), p.get("namespace")) == (name, namespace)), {}
    )
    locate = _locator(install.manifest_folder(), statuses)
    messages = [m for found in received.values() for m in found]
    return Served.from_messages(messages, sources_from_proxy(proxy, locate))


def _locator(folder: Path | None, statuses: dict[str, Any]) -> Any:
    """(kind, namespace, name, field) → (file, line): the line when gwctl can read the file."""
    from gw.explain.origins import locator

    def read(file: str) -> str | None:
        if folder is None:
            return None
        try:
            return (folder / file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return locator(statuses.get("inputs", []), read)


def _proxy_port(install: Install, name: str, namespace: str, scheme: str) -> int | None:
    try:
        return urlsplit(install.proxy_url(name, namespace, scheme)).port
    except InstallError:
        return None


def send_request(install: Install, name: str, namespace: str, request: Any, port: int) -> Sent:
    """Send `request` to the proxy's listener on `port` (its Host header and SNI as given)."""
    from gw import probe

    try:
        base = urlsplit(install.proxy_url(name, namespace, request.scheme))
    except InstallError as exc:
        return Sent(None, error=str(exc))
    if install.kind == "folder":
        target = probe.origin(request.scheme, base.hostname or "127.0.0.1", port)
    else:  # a Service port forwards to the listener: send to the Service's
        target = f"{request.scheme}://{base.netloc}"
    return probe.send(request, target)
