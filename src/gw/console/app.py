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
    env = templates()
    token = secrets.token_urlsafe(32)
    data = views.Views(controlplane, ads, options, components)

    def page(request: Request, name: str, title: str, **context: Any) -> HTMLResponse:
        live = request.query_params.get(PART) == "live"
        template = env.get_template(f"{name}_live.html" if live else f"{name}.html")
        html = template.render(
            title=title,
            nav=NAV,
            current=name,
            version=__version__,
            banner=data.banner(),
            token=token,
            send=options.send_host is not None,
            **context,
        )
        return HTMLResponse(html, headers=HEADERS)

    async def resources(request: Request) -> HTMLResponse:
        q = {k: v for k, v in request.query_params.items() if k != PART}
        view = data.resources(q.get("kind", ""), q.get("state", ""), q.get("q", ""))
        return page(request, "resources", "Resources", view=view, query=q)

    async def routes(request: Request) -> HTMLResponse:
        tree = await asyncio.to_thread(data.routes, request.query_params.get("proxy", ""))
        return page(request, "routes", "Routes", **tree)

    async def explain_form(request: Request) -> HTMLResponse:
        form = ExplainForm.of(request.query_params)
        return page(request, "explain", "Explain", form=form, answer=None, **data.proxy_names())

    async def explain_post(request: Request) -> HTMLResponse:
        fields = await _form(request)
        if fields is None or not hmac.compare_digest(fields.get("token", ""), token):
            return HTMLResponse(
                env.get_template("refused.html").render(), status_code=403, headers=HEADERS
            )
        form = ExplainForm.of(fields)
        wants_send = options.send_host is not None and fields.get("send") == "1"
        answer = await asyncio.to_thread(data.explain, form, wants_send)
        return page(request, "explain", "Explain", form=form, answer=answer, **data.proxy_names())

    async def traffic(request: Request) -> HTMLResponse:
        await data.sampler.refresh()
        return page(request, "traffic", "Traffic", **await asyncio.to_thread(data.traffic))

    async def proxies(request: Request) -> HTMLResponse:
        return page(request, "proxies", "Proxies", **data.proxies())

    static = StaticFiles(packages=[("gw.console", "static")])
    return [
        Mount(
            "/console",
            routes=[
                Route("/", resources, methods=["GET"]),
                Route("/routes", routes, methods=["GET"]),
                Route("/explain", explain_form, methods=["GET"]),
                Route("/explain", explain_post, methods=["POST"]),
                Route("/traffic", traffic, methods=["GET"]),
                Route("/proxies", proxies, methods=["GET"]),
                Mount("/static", static, name="static"),
            ],
        )
    ]


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
