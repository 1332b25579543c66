"""`redirectAction` → `ir.Redirect`: a new host, scheme, port and path (one of
`pathRedirect`, `prefixRewrite` and `regexRewrite`), and the status."""

from __future__ import annotations

from gw.api.virtualservice import RedirectAction
from gw.translator import ir
from gw.translator.gateway.matching import regex_rewrite
from gw.translator.reports import ResourceReport

_CODES = {
    None: 301,
    "MOVED_PERMANENTLY": 301,
    "FOUND": 302,
    "SEE_OTHER": 303,
    "TEMPORARY_REDIRECT": 307,
    "PERMANENT_REDIRECT": 308,
}


def build_redirect(r: RedirectAction, field: str, report: ResourceReport) -> ir.Redirect | None:
    paths = [
        name
        for name, value in (
            ("pathRedirect", r.path_redirect),
            ("prefixRewrite", r.prefix_rewrite),
            ("regexRewrite", r.regex_rewrite),
        )
        if value is not None
    ]
    if len(paths) > 1:
        report.error(
            field,
            f"set one of pathRedirect, prefixRewrite and regexRewrite, not {', '.join(paths)}",
        )
        return None
    rewrite = None
    if r.regex_rewrite is not None:
        rewrite = regex_rewrite(r.regex_rewrite, f"{field}.regexRewrite", report)
        if rewrite is None:
            return None
    return ir.Redirect(
        host=r.host_redirect,
        path=r.path_redirect,
        prefix_rewrite=r.prefix_rewrite,
        regex_rewrite=rewrite,
        response_code=_CODES[r.response_code],
        https=r.https_redirect,
        strip_query=r.strip_query,
        port=r.port_redirect,
    )
