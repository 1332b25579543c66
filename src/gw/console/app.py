"""The console's routes, mounted by the admin server at `/console/`.

| path | page |
|---|---|
| `/console/` | every resource with its status and reason, rejected first |
| `/console/routes` | the route tree per host, with statuses |
| `/console/explain` | the explain form (GET fills it from the query, POST explains) |
| `/console/traffic` | live traffic per listener and route (under `gw up`) |
| `/console/proxies` | Proxies, xDS clients and their ACK/NACK per type, translation |
| `/console/static/...` | the style sheet and the script |

Links are relative, so the console also works behind a path prefix (the orchestrator API
server's service proxy). Pages carry a strict Content-Security-Policy (scripts and styles
from the console only), are never cached, and every value is escaped by the templates. The
only form that posts, explain, carries a token of this process (cross-site posts fail); its
"send" button exists only when the install turned it on.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from gw import __version__
from gw.console import views
from gw.console.explaining import ExplainForm
from gw.console.options import ConsoleOptions
from gw.controlplane import ControlPlane
from gw.xds.server import AdsServer

#: The largest explain form accepted (bytes).
MAX_FORM = 64 * 1024
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
NAV = (("./", "Resources"), ("routes", "Routes"), ("explain", "Explain"), ("traffic", "Traffic"),
       ("proxies", "Proxies"))  # fmt: skip
#: The query parameter (`part=live`) with which the console's script asks for a page's
#: live part alone (a parameter, not a header: proxies in front pass it on).
PART = "part"


def templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("gw.console", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["rate"] = lambda v: "–" if v is None else f"{v:.1f}/s"
    env.filters["ms"] = lambda v: "–" if v is None else f"{v:.3g} ms"
    return env


def console_routes(
    controlplane: ControlPlane,
    ads: AdsServer,
    options: ConsoleOptions,
    components: Callable[[], list[dict[str, Any]]] | None = None,
) -> list[BaseRoute]:
    pages = Pages(views.Views(controlplane, ads, options, components), options)
    static = StaticFiles(packages=[("gw.console", "static")])
    return [
        Mount(
            "/console",
            routes=[
                Route("/", pages.resources, methods=["GET"]),
                Route("/routes", pages.routes, methods=["GET"]),
                Route("/explain", pages.explain_form, methods=["GET"]),
                Route("/explain", pages.explain_post, methods=["POST"]),
                Route("/traffic", pages.traffic, methods=["GET"]),
                Route("/proxies", pages.proxies, methods=["GET"]),
                Mount("/static", static, name="static"),
            ],
        )
    ]


class Pages:
    """The page handlers: each reads its data (`views.Views`) and renders its template."""

    def __init__(self, data: views.Views, options: ConsoleOptions) -> None:
        self.data = data
        self.options = options
        self.env = templates()
        #: What the explain form carries: only this process's pages know it.
        self.token = secrets.token_urlsafe(32)

    def page(self, request: Request, name: str, title: str, **context: Any) -> HTMLResponse:
        live = request.query_params.get(PART) == "live"
        template = self.env.get_template(f"{name}_live.html" if live else f"{name}.html")
        html = template.render(
            title=title,
            nav=NAV,
            current=name,
            version=__version__,
            banner=self.data.banner(),
            token=self.token,
            send=self.options.send_host is not None,
            **context,
        )
        return HTMLResponse(html, headers=HEADERS)

    async def resources(self, request: Request) -> HTMLResponse:
        q = {k: v for k, v in request.query_params.items() if k != PART}
        view = self.data.resources(q.get("kind", ""), q.get("state", ""), q.get("q", ""))
        return self.page(request, "resources", "Resources", view=view, query=q)

    async def routes(self, request: Request) -> HTMLResponse:
        q = request.query_params
        tree = await asyncio.to_thread(self.data.routes, q.get("proxy", ""), q.get("q", ""))
        return self.page(request, "routes", "Routes", query=q.get("q", ""), **tree)

    async def explain_form(self, request: Request) -> HTMLResponse:
        form = ExplainForm.of(request.query_params)
        names = self.data.proxy_names()
        return self.page(request, "explain", "Explain", form=form, answer=None, **names)

    async def explain_post(self, request: Request) -> HTMLResponse:
        fields = await _form(request)
        if fields is None or not hmac.compare_digest(fields.get("token", ""), self.token):
            refused = self.env.get_template("refused.html").render()
            return HTMLResponse(refused, status_code=403, headers=HEADERS)
        form = ExplainForm.of(fields)
        wants_send = self.options.send_host is not None and fields.get("send") == "1"
        answer = await asyncio.to_thread(self.data.explain, form, wants_send)
        names = self.data.proxy_names()
        return self.page(request, "explain", "Explain", form=form, answer=answer, **names)

    async def traffic(self, request: Request) -> HTMLResponse:
        await self.data.sampler.refresh()
        data = await asyncio.to_thread(self.data.traffic)
        return self.page(request, "traffic", "Traffic", **data)

    async def proxies(self, request: Request) -> HTMLResponse:
        return self.page(request, "proxies", "Proxies", **self.data.proxies())


async def _form(request: Request) -> dict[str, str] | None:
    """A URL-encoded form body of at most `MAX_FORM` bytes; None otherwise."""
    if request.headers.get("content-type", "").split(";")[0].strip() != (
        "application/x-www-form-urlencoded"
    ):
        return None
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM:
            return None
    try:
        return dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
    except UnicodeDecodeError:
        return None
