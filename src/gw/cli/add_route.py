"""`gwctl add route`, `gwctl remove route` and `gwctl route sort`: put one route into a
virtual service (or a route table) at an index, take one out, or order them most specific
first, as the established tool's commands of the same names do (REFERENCE.md §7.1, §7.6).

Without `--name`, `add route` picks the virtual service of the namespace that serves the
domain `*`, and creates one named `default` for `*` when there is none: the getting-started
guides start with a bare `gwctl add route --path-exact /all-pets --dest-name ...`.

The resource is edited from its stored manifest (the document of the served folder that
holds it, or the object in the orchestrator), not from what the control plane shows: that
has secret values redacted and defaults filled in, and writing it back would lose the one
and freeze the other. The new manifest is checked by the control plane's models before it
is written; then the command prints the virtual service (or route table) table with the
status the control plane gives it.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

import typer

from gw.cli.command import AdminUrl, connect, fail, to_yaml
from gw.cli.create import key_values, parse_manifest, status_table
from gw.cli.get_routes import routetable_table, virtualservice_table
from gw.cli.install import CONTROLLER_NAMESPACE, Install, InstallError

add_app = typer.Typer(help="Add configuration to a resource.", no_args_is_help=True)
remove_app = typer.Typer(help="Remove configuration from a resource.", no_args_is_help=True)
route_app = typer.Typer(help="Work on the routes of a virtual service.", no_args_is_help=True)

GATEWAY_API = "gateway.vendor.io/v1"
#: The virtual service `add route` creates when none serves `*` and none is named.
DEFAULT_NAME = "default"
ANY_DOMAIN = "*"

Namespace = Annotated[
    str,
    typer.Option(
        "-n", "--namespace", help="Namespace of the virtual service (or route table) to change."
    ),
]
DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Print the changed manifest, write nothing.")
]
ResourceName = Annotated[
    str | None,
    typer.Option(
        "--name",
        help="The virtual service (or route table) to change; default: the one for domain `*`.",
    ),
]
ToRouteTable = Annotated[
    bool,
    typer.Option("--to-route-table", help="Change a route table instead of a virtual service."),
]
Index = Annotated[
    int,
    typer.Option(
        "-x", "--index", min=0, help="Position in the route list (0: first; the rest shift back)."
    ),
]


@add_app.command("route")
def add_route(
    path_prefix: Annotated[
        str | None, typer.Option("-p", "--path-prefix", help="Path prefix to match.")
    ] = None,
    path_exact: Annotated[
        str | None, typer.Option("-e", "--path-exact", help="Exact path to match.")
    ] = None,
    path_regex: Annotated[
        str | None, typer.Option("-r", "--path-regex", help="Regex the path must match.")
    ] = None,
    methods: Annotated[
        list[str] | None, typer.Option("-m", "--method", help="HTTP methods to match (any).")
    ] = None,
    headers: Annotated[
        list[str] | None,
        typer.Option("-d", "--header", help="Headers to match: name=regex (repeat, or a,b)."),
    ] = None,
    query: Annotated[
        list[str] | None,
        typer.Option(
            "-q", "--queryParameter", help="Query parameters to match: name=regex (repeat)."
        ),
    ] = None,
    dest_name: Annotated[
        str | None, typer.Option("-u", "--dest-name", help="The destination upstream.")
    ] = None,
    dest_namespace: Annotated[
        str, typer.Option("-s", "--dest-namespace", help="The destination upstream's namespace.")
    ] = CONTROLLER_NAMESPACE,
    group_name: Annotated[
        str | None,
        typer.Option("--upstream-group-name", help="An upstream group as the destination."),
    ] = None,
    group_namespace: Annotated[
        str, typer.Option("--upstream-group-namespace", help="The upstream group's namespace.")
    ] = CONTROLLER_NAMESPACE,
    delegate_name: Annotated[
        str | None, typer.Option("--delegate-name", help="Delegate to this route table.")
    ] = None,
    delegate_namespace: Annotated[
        str, typer.Option("--delegate-namespace", help="The route table's namespace.")
    ] = CONTROLLER_NAMESPACE,
    prefix_rewrite: Annotated[
        str | None,
        typer.Option("--prefix-rewrite", help="Rewrite the matched prefix of the path to this."),
    ] = None,
    index: Index = 0,
    name: ResourceName = None,
    to_route_table: ToRouteTable = False,
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Add a route to a virtual service: the one named, else the namespace's virtual service
    for domain `*`, created (named `default`) when there is none."""
    route = route_from_options(
        matcher=path_matcher(path_prefix, path_exact, path_regex)
        | request_matchers(methods, headers, query),
        action=route_action(
            (dest_name, dest_namespace),
            (group_name, group_namespace),
            (delegate_name, delegate_namespace),
        ),
        prefix_rewrite=prefix_rewrite,
    )
    install = connect(admin_url)
    kind = "RouteTable" if to_route_table else "VirtualService"
    manifest = resource_to_change(install, kind, namespace, name)
    routes = _routes(manifest)
    if index > len(routes):
        fail(f"--index {index} is past the end of the {len(routes)} routes of {_where(manifest)}")
    routes.insert(index, route)
    apply_change(install, manifest, dry_run)


@remove_app.command("route")
def remove_route(
    index: Index = 0,
    name: Annotated[str | None, typer.Option("--name", help="The virtual service.")] = None,
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Remove the route at an index from a virtual service."""
    if not name:
        fail("name of the target virtual service cannot be empty")
    install = connect(admin_url)
    manifest = resource_to_change(install, "VirtualService", namespace, name, create=False)
    routes = _routes(manifest)
    if index >= len(routes):
        fail(f"{index} is greater than the number of routes on {_where(manifest)} ({len(routes)})")
    del routes[index]
    apply_change(install, manifest, dry_run)


@route_app.command("sort")
def sort_routes(
    name: Annotated[str | None, typer.Option("--name", help="The virtual service.")] = None,
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Order a virtual service's routes most specific first: exact < regex < prefix paths,
    longer paths first, more methods first."""
    if not name:
        fail("name of the target virtual service cannot be empty")
    install = connect(admin_url)
    manifest = resource_to_change(install, "VirtualService", namespace, name, create=False)
    routes = _routes(manifest)
    typer.echo(
        f"sorting {len(routes)} routes by:\n- exact < regex < prefix\n- longest path first\n..."
    )
    routes[:] = sorted(routes, key=functools.cmp_to_key(compare_routes))
    apply_change(install, manifest, dry_run)


#: How specific a path matcher is: one without a path first, then exact, regex, prefix.
_PATH_KINDS = ("exact", "regex", "prefix")


def compare_routes(first: dict[str, Any], second: dict[str, Any]) -> int:
    """The established tool's order of two routes (`route sort`), each by its most specific
    matcher (a route without matchers has `prefix: /`): more methods first, then the kind of
    path (none < exact < regex < prefix), then the greater path string first (so
    `/api/users` before `/api`). Equal routes keep their order (the sort is stable)."""
    return _compare_matchers(_most_specific(first), _most_specific(second))


def _most_specific(route: dict[str, Any]) -> dict[str, Any]:
    matchers = route.get("matchers") or [{"prefix": "/"}]
    return min(matchers, key=functools.cmp_to_key(_compare_matchers))


def _compare_matchers(first: dict[str, Any], second: dict[str, Any]) -> int:
    methods = len(second.get("methods") or []) - len(first.get("methods") or [])
    if methods:
        return methods
    kinds = _path_kind(first) - _path_kind(second)
    if kinds:
        return kinds
    path, other = _path(first), _path(second)
    return (path < other) - (path > other)


def _path_kind(matcher: dict[str, Any]) -> int:
    return next((i + 1 for i, kind in enumerate(_PATH_KINDS) if kind in matcher), 0)


def _path(matcher: dict[str, Any]) -> str:
    return next((str(matcher[kind]) for kind in _PATH_KINDS if kind in matcher), "")


def path_matcher(prefix: str | None, exact: str | None, regex: str | None) -> dict[str, Any]:
    given = [(k, v) for k, v in (("prefix", prefix), ("exact", exact), ("regex", regex)) if v]
    if not given:
        fail("give the path to match: --path-prefix, --path-exact or --path-regex")
    if len(given) > 1:
        fail("give only one of --path-prefix, --path-exact and --path-regex")
    return dict(given)


def request_matchers(
    methods: list[str] | None, headers: list[str] | None, query: list[str] | None
) -> dict[str, Any]:
    """Methods, headers and query parameters to match; header and query values are regexes,
    as the established tool sets them."""
    out: dict[str, Any] = {}
    header_values = _pairs(headers, "--header")
    if header_values:
        out["headers"] = [
            {"name": k, "value": v, "regex": True} for k, v in sorted(header_values.items())
        ]
    query_values = _pairs(query, "--queryParameter")
    if query_values:
        out["queryParameters"] = [
            {"name": k, "value": v, "regex": True} for k, v in sorted(query_values.items())
        ]
    if methods:
        out["methods"] = [m.upper() for m in _items(methods)]
    return out


Ref = tuple[str | None, str]


def route_action(upstream: Ref, group: Ref, delegate: Ref) -> dict[str, Any]:
    """Where the route sends requests, each given as (name, namespace): a route table
    (delegation), an upstream group, or an upstream, in that order of precedence."""
    if delegate[0]:
        return {"delegateAction": {"ref": _ref(delegate)}}
    if group[0]:
        return {"routeAction": {"upstreamGroup": _ref(group)}}
    if not upstream[0]:
        fail("give the destination: --dest-name, --upstream-group-name or --delegate-name")
    return {"routeAction": {"single": {"upstream": _ref(upstream)}}}


def _ref(ref: Ref) -> dict[str, str]:
    return {"name": str(ref[0]), "namespace": ref[1]}


def route_from_options(
    matcher: dict[str, Any], action: dict[str, Any], prefix_rewrite: str | None
) -> dict[str, Any]:
    route: dict[str, Any] = {"matchers": [matcher], **action}
    if prefix_rewrite is not None:
        route["options"] = {"prefixRewrite": prefix_rewrite}
    return route


def _items(values: list[str] | None) -> list[str]:
    """Repeated options, each of which may also be a comma-separated list."""
    return [item for value in values or [] for item in value.split(",") if item]


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    items = _items(values)
    return key_values(",".join(items), option) if items else {}


def resource_to_change(
    install: Install, kind: str, namespace: str, name: str | None, *, create: bool = True
) -> dict[str, Any]:
    """The stored manifest of the resource to change (not the control plane's view of it);
    a new one when it does not exist and `create` allows."""
    if name is None and kind == "VirtualService":
        name = _serving_any_domain(install, namespace) or DEFAULT_NAME
    elif name is None:
        name = DEFAULT_NAME
    try:
        manifest = install.manifest(kind, namespace, name)
    except InstallError as exc:
        fail(str(exc))
    if manifest is not None:
        return manifest
    if not create:
        fail(f"{kind} {namespace}.{name} not found")
    spec: dict[str, Any] = (
        {"virtualHost": {"domains": [ANY_DOMAIN], "routes": []}}
        if kind == "VirtualService"
        else {"routes": []}
    )
    return {
        "apiVersion": GATEWAY_API,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _serving_any_domain(install: Install, namespace: str) -> str | None:
    """The first virtual service of the namespace (by name) whose domains include `*`."""
    try:
        resources = install.admin("/snapshots/input")
    except InstallError as exc:
        fail(str(exc))
    names = sorted(
        r["metadata"]["name"]
        for r in resources
        if r["kind"] == "VirtualService"
        and r["metadata"].get("namespace", "default") == namespace
        and ANY_DOMAIN in ((r.get("spec") or {}).get("virtualHost") or {}).get("domains", [])
    )
    return names[0] if names else None


def _routes(manifest: dict[str, Any]) -> list[Any]:
    """The manifest's route list, made where it is missing or null (`routes:` left empty)."""
    spec = _mapping(manifest, "spec", manifest)
    holder = (
        _mapping(spec, "virtualHost", manifest) if manifest["kind"] == "VirtualService" else spec
    )
    routes = holder.get("routes")
    if routes is None:
        routes = holder["routes"] = []
    if not isinstance(routes, list):
        fail(f"{_where(manifest)}: routes is not a list; fix its manifest first")
    return routes


def _mapping(parent: dict[str, Any], key: str, manifest: dict[str, Any]) -> dict[str, Any]:
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    if not isinstance(value, dict):
        fail(f"{_where(manifest)}: {key} is not a mapping; fix its manifest first")
    return value


def _where(manifest: dict[str, Any]) -> str:
    meta = manifest["metadata"]
    return f"{manifest['kind']} {meta.get('namespace', 'default')}.{meta['name']}"


def apply_change(install: Install, manifest: dict[str, Any], dry_run: bool) -> None:
    """Check the changed manifest with the control plane's models, then print it
    (`--dry-run`) or write it and print its table once the control plane has read it."""
    parse_manifest(manifest)
    if dry_run:
        typer.echo(to_yaml(manifest), nl=False)
        return
    try:
        install.apply(manifest, to_yaml(manifest), keep_comments=True)
    except InstallError as exc:
        fail(str(exc))
    table = virtualservice_table if manifest["kind"] == "VirtualService" else routetable_table
    typer.echo(status_table(install, manifest, table))
