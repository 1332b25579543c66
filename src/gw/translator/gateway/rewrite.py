"""Path and host rewrites of a forwarded request → `ir.Rewrites`: `regexRewrite` (the path,
by an RE2 regex), and of the host rewrites (one at most: `hostRewrite`, `autoHostRewrite`,
`hostRewritePathRegex`, `hostRewriteHeader`) the two that are not plain fields of
`ir.Forward`; `appendXForwardedHost` keeps the original Host in `x-forwarded-host`."""

from __future__ import annotations

from gw.api.virtualservice import RouteOptions
from gw.translator import ir
from gw.translator.gateway.headers import header_name_problem
from gw.translator.gateway.matching import regex_rewrite
from gw.translator.reports import ResourceReport

#: The host rewrites, a oneof in the established API: (model attribute, manifest field).
HOST_REWRITES = (
    ("host_rewrite", "hostRewrite"),
    ("auto_host_rewrite", "autoHostRewrite"),
    ("host_rewrite_path_regex", "hostRewritePathRegex"),
    ("host_rewrite_header", "hostRewriteHeader"),
)


#: What is compared with to tell that nothing is set (made once, not per call).
_NO_REWRITES = ir.Rewrites()


def build_rewrites(options: RouteOptions, field: str, report: ResourceReport) -> ir.Rewrites | None:
    """None when nothing is rewritten or something is wrong (reported)."""
    errors = len(report.errors)
    hosts = [name for attr, name in HOST_REWRITES if getattr(options, attr) is not None]
    if len(hosts) > 1:
        report.error(
            field,
            f"{' and '.join(hosts)} are set: a route rewrites its host one way (set one of "
            "hostRewrite, autoHostRewrite, hostRewritePathRegex and hostRewriteHeader)",
        )
    path_regex = host_path_regex = None
    if options.regex_rewrite is not None:
        if options.prefix_rewrite:
            report.error(
                f"{field}.regexRewrite",
                "prefixRewrite and regexRewrite are both set: a route rewrites its path one way",
            )
        path_regex = regex_rewrite(options.regex_rewrite, f"{field}.regexRewrite", report)
    if options.host_rewrite_path_regex is not None:
        host_path_regex = regex_rewrite(
            options.host_rewrite_path_regex, f"{field}.hostRewritePathRegex", report
        )
    header = options.host_rewrite_header
    if header is not None:
        problem = header_name_problem(header) if header.lower() != "host" else None
        if problem is not None or not header:
            report.error(f"{field}.hostRewriteHeader", problem or "the header name is empty")
    append = bool(options.append_x_forwarded_host)
    if append and not hosts:
        report.warning(
            f"{field}.appendXForwardedHost",
            "no effect: the route rewrites no host (set a host rewrite, or remove it)",
        )
    if len(report.errors) > errors:
        return None
    built = ir.Rewrites(
        path_regex=path_regex,
        host_header=header.lower() if header else None,
        host_path_regex=host_path_regex,
        append_x_forwarded_host=append and bool(hosts),
    )
    return None if built == _NO_REWRITES else built
