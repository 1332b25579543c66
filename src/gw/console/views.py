"""Each console page's data, read from the control plane as the admin API reads it.

Nothing here changes anything: the statuses, the last translation, the xDS connections and
the process list are read; the proxy's statistics are fetched (`traffic.Sampler`); an
explained request is sent only when the install allows it and the user asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gw import probe
from gw.admin import server as admin
from gw.console import explaining, proxies, resources, routetree, traffic, traffic_rows
from gw.console.options import ConsoleOptions
from gw.controlplane import ControlPlane
from gw.explain.request import Request
from gw.explain.served import Served
from gw.store.directory import DirectoryStore
from gw.supervision import TASKS
from gw.translator import ir
from gw.xds.server import AdsServer

Components = Callable[[], list[dict[str, Any]]]


class Views:
    def __init__(
        self,
        controlplane: ControlPlane,
        ads: AdsServer,
        options: ConsoleOptions,
        components: Components | None = None,
    ) -> None:
        self.controlplane = controlplane
        self.ads = ads
        self.options = options
        self.components = components
        self.sampler = traffic.Sampler(options.proxy_admin_url)
        store = controlplane.store
        folder = store.root if isinstance(store, DirectoryStore) else None
        self._served = explaining.ServedProxies(folder)

    def banner(self) -> str:
        """What is wrong with the control plane itself, if anything."""
        failure = self.controlplane.translation.failure()
        if failure is not None:
            return failure[:1].upper() + failure[1:]
        if self.controlplane.result is None:
            return "Nothing is served yet: the first translation has not finished."
        return ""

    def statuses(self) -> dict[str, Any]:
        return admin.status_rows(self.controlplane)

    def resources(self, kind: str, state: str, text: str) -> resources.ResourcesView:
        return resources.resources_view(self.statuses(), kind=kind, state=state, text=text)

    def proxy_names(self) -> dict[str, Any]:
        result = self.controlplane.result
        names = [p.name for p in result.proxies] if result else []
        return {"proxies": names, "default_proxy": self.controlplane.options.proxy_name}

    def _proxy(self, name: str) -> ir.Proxy | None:
        result = self.controlplane.result
        if result is None:
            return None
        wanted = name or self.controlplane.options.proxy_name
        return next((p for p in result.proxies if p.name == wanted), None)

    def served(self, proxy: ir.Proxy, statuses: dict[str, Any] | None = None) -> Served:
        result = self.controlplane.result
        assert result is not None  # there is a proxy: there is a result
        inputs = (statuses or self.statuses())["inputs"]
        return self._served.served(result, proxy, inputs)

    def routes(self, proxy_name: str, text: str) -> dict[str, Any]:
        statuses = self.statuses()
        by_key = {
            f"{r['kind']} {r['namespace']}.{r['name']}": (
                r["status"]["state"],
                r["status"].get("reason", ""),
            )
            for r in statuses["resources"]
        }
        proxy = self._proxy(proxy_name)
        tree = (
            routetree.build_tree(self.served(proxy, statuses), by_key, text=text)
            if proxy
            else routetree.Tree(hosts=(), matched=0, served=frozenset())
        )
        return {
            "tree": tree,
            "not_served": routetree.not_served(tree, by_key),
            "proxy": proxy.name if proxy else "",
            **self.proxy_names(),
        }

    def explain(self, form: explaining.ExplainForm, send: bool) -> explaining.Answer:
        proxy = self._proxy(form.proxy)
        if proxy is None:
            return explaining.Answer(error=f"no proxy {form.proxy!r} is served (yet)")
        options = self.controlplane.options
        ports = {"http": options.http_port, "https": options.https_port}
        sender = self._sender() if send else None
        return explaining.answer(form, self.served(proxy), ports, sender)

    def _sender(self) -> Callable[[Request, int], probe.Sent] | None:
        host = self.options.send_host
        if host is None:
            return None
        return lambda request, port: probe.send(request, probe.origin(request.scheme, host, port))

    def traffic(self) -> dict[str, Any]:
        proxy = self._proxy("")
        samples = list(self.sampler.samples)
        served = self.served(proxy) if proxy is not None else None
        routes = traffic_rows.route_rows(served, samples) if served else None
        per_route = served is not None and any(
            r.stat_prefix for c in served.routes.values() for v in c.virtual_hosts for r in v.routes
        )
        return {
            "available": self.options.proxy_admin_url is not None,
            "error": self.sampler.error,
            "samples": len(samples),
            "seconds": round(samples[-1].at - samples[0].at) if len(samples) > 1 else 0,
            "listeners": traffic_rows.listener_rows(served, samples) if served else [],
            "routes": routes,
            "per_route": per_route,
        }

    def proxies(self) -> dict[str, Any]:
        data = admin.proxies_data(self.controlplane, self.ads)
        result = self.controlplane.result
        connections = data["connections"]

        def status_of(proxy: ir.Proxy) -> Any:
            status = self.controlplane.proxy_status(proxy.name)
            return admin.with_nacks(status, proxy, connections)

        return {
            "proxy_rows": proxies.proxy_rows(result.proxies if result else (), status_of),
            "clients": proxies.clients(connections),
            "translation": data["translation"],
            "failure": self.controlplane.translation.failure(),
            "components": self.components() if self.components else None,
            "tasks": TASKS.data(),
        }
