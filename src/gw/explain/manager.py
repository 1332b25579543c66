"""What the HTTP connection manager does around routing: to the request before anything reads
it, and to the answers Envoy makes itself.

Before routing: headers with underscores are dropped (`headers_with_underscores_action`),
the early header mutations remove and add headers, a trailing dot leaves the host
(`strip_trailing_host_dot`: `shop.test.` is `shop.test`). Afterwards, a local reply (what a
filter, the router or a direct response answers) goes through `local_reply_config`: the first
mapper whose filter matches replaces its status and body (gw's: a `Host` with userinfo, or
two `Host` headers, is `400 invalid Host header`).
"""

from __future__ import annotations

import dataclasses

from envoy.config.accesslog.v3 import accesslog_pb2
from envoy.config.core.v3 import protocol_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.extensions.http.early_header_mutation.header_mutation.v3 import (
    header_mutation_pb2,
)

from gw.explain.explanation import Outcome
from gw.explain.matching import header_check
from gw.explain.request import Request

_DROP_UNDERSCORES = protocol_pb2.HttpProtocolOptions.DROP_HEADER
_EARLY_MUTATION = "envoy.extensions.http.early_header_mutation.header_mutation.v3.HeaderMutation"


def prepare_request(
    request: Request, manager: hcm_pb2.HttpConnectionManager
) -> tuple[Request, list[str]]:
    """The request as routing and the filters see it, and what changed."""
    notes = []
    headers = list(request.headers)
    options = manager.common_http_protocol_options
    if options.headers_with_underscores_action == _DROP_UNDERSCORES:
        dropped = [n for n, _ in headers if "_" in n]
        if dropped:
            headers = [(n, v) for n, v in headers if "_" not in n]
            notes.append(
                "headers with underscores are dropped before anything reads them: "
                + ", ".join(dropped)
            )
    for extension in manager.early_header_mutation_extensions:
        if extension.typed_config.type_url.rsplit("/", 1)[-1] != _EARLY_MUTATION:
            continue
        mutation = header_mutation_pb2.HeaderMutation()
        extension.typed_config.Unpack(mutation)
        headers = _mutate(headers, mutation, notes)
    authority = request.authority
    if manager.strip_trailing_host_dot:
        host, sep, port = authority.rpartition(":")
        if not (sep and port.isdigit()):
            host, port = authority, ""
        if host.endswith("."):
            authority = host[:-1] + (f":{port}" if port else "")
            notes.append(f"the trailing dot of the host is dropped: {authority}")
    return dataclasses.replace(request, headers=tuple(headers), authority=authority), notes


def _mutate(
    headers: list[tuple[str, str]], mutation: header_mutation_pb2.HeaderMutation, notes: list[str]
) -> list[tuple[str, str]]:
    for change in mutation.mutations:
        action = change.WhichOneof("action")
        if action == "remove":
            name = change.remove.lower()
            if any(n == name for n, _ in headers):
                notes.append(f"header {name} is removed before routing (a header gw sets)")
            headers = [(n, v) for n, v in headers if n != name]
        elif action == "append":
            header = change.append.header
            headers.append((header.key.lower(), header.value))
            notes.append(f"header {header.key.lower()}: {header.value} is added before routing")
    return headers


def map_local_reply(
    manager: hcm_pb2.HttpConnectionManager, request: Request, outcome: Outcome
) -> Outcome:
    """A local reply as the connection manager's mappers change it."""
    if outcome.action != "respond" or outcome.status is None:
        return outcome
    for mapper in manager.local_reply_config.mappers:
        if not _passes(mapper.filter, request, outcome.status):
            continue
        status = mapper.status_code.value if mapper.HasField("status_code") else outcome.status
        body = mapper.body.inline_string if mapper.HasField("body") else outcome.body
        by = f"{outcome.by}, then the connection manager's local reply mapping"
        return dataclasses.replace(outcome, status=status, body=body, by=by)
    return outcome


def _passes(log_filter: accesslog_pb2.AccessLogFilter, request: Request, status: int) -> bool:
    kind = log_filter.WhichOneof("filter_specifier")
    if kind == "header_filter":
        return header_check(log_filter.header_filter.header, request).ok
    if kind == "or_filter":
        return any(_passes(f, request, status) for f in log_filter.or_filter.filters)
    if kind == "and_filter":
        return all(_passes(f, request, status) for f in log_filter.and_filter.filters)
    if kind == "status_code_filter":
        comparison = log_filter.status_code_filter.comparison
        value = int(comparison.value.default_value)
        op = comparison.op
        if op == accesslog_pb2.ComparisonFilter.EQ:
            return status == value
        return status >= value if op == accesslog_pb2.ComparisonFilter.GE else status <= value
    return False  # filters gw does not use
