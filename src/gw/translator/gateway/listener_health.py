"""`httpGateway.options.healthCheck` → `ir.ListenerHealthCheck`: a path the proxy answers itself.

The path is matched exactly (the established gateway's rule), before any route and any
authentication, so that a load balancer's probe needs neither a virtual host for its `Host`
nor credentials. It must be a path: `/` and a query string are refused (a probe of `/`
would hide every route's root).
"""

from __future__ import annotations

from gw.api.http_listener_options import HealthCheck
from gw.translator import ir
from gw.translator.gateway.headers import line_break_problem
from gw.translator.reports import ResourceReport

FIELD = "spec.httpGateway.options.healthCheck.path"


def build_health_check(check: HealthCheck, report: ResourceReport) -> ir.ListenerHealthCheck | None:
    path = check.path
    if not path:
        report.error(FIELD, 'health check path cannot be "": name the path, e.g. /healthz')
        return None
    problem = line_break_problem(path)
    if problem is None and not path.startswith("/"):
        problem = "a path starts with /"
    if problem is None and ("?" in path or "#" in path or path == "/"):
        problem = f"{path} is not a path of its own (no query, no fragment, not /)"
    if problem is not None:
        report.error(FIELD, problem)
        return None
    return ir.ListenerHealthCheck(path=path)
