"""The explain page: the form (method, URL, headers, cookies, client address, SNI), and the
answer `gwctl explain` gives for the same request, worked out by the same code
(`gw.explain.explainer.explain`, sectioned by `gw.cli.explain_text.sections`) from what the
control plane serves the proxy right now.

The served configuration is taken from the last translation in this process (what the xDS
server hands out), with where each route was written; in a folder install the files give the
lines. It is built once per translation and proxy.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gw.cli.explain_text import difference, sections
from gw.explain.explainer import explain
from gw.explain.explanation import Outcome
from gw.explain.listeners import choose_port
from gw.explain.origins import locator
from gw.explain.request import Request, RequestError
from gw.explain.served import Served, sources_from_proxy
from gw.probe import Sent
from gw.translator import ir
from gw.translator.dump import proxy_to_data
from gw.translator.translation import Result

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
#: The longest form value taken (a header block, a URL); more is refused.
MAX_FIELD = 16 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class ExplainForm:
    """The form as submitted (and shown again, filled in)."""

    method: str = "GET"
    url: str = ""
    #: `Name: value`, one per line.
    headers: str = ""
    #: `name=value`, one per line.
    cookies: str = ""
    source_ip: str = ""
    sni: str = ""
    proxy: str = ""

    @classmethod
    def of(cls, fields: Mapping[str, str]) -> ExplainForm:
        def value(name: str) -> str:
            return str(fields.get(name, ""))[:MAX_FIELD]

        return cls(
            method=(value("method").strip().upper() or "GET"),
            url=value("url").strip(),
            headers=value("headers"),
            cookies=value("cookies"),
            source_ip=value("source_ip").strip(),
            sni=value("sni").strip(),
            proxy=value("proxy").strip(),
        )

    def request(self) -> Request:
        if not self.url:
            raise RequestError("give the URL to explain, e.g. http://shop.example.com/api")
        return Request.parse(
            self.method,
            self.url,
            [line for line in self.headers.splitlines() if line.strip()],
            cookies=[line.strip() for line in self.cookies.splitlines() if line.strip()],
            source_ip=self.source_ip or None,
            sni=self.sni or None,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """What the page shows below the form."""

    error: str = ""
    note: str = ""
    sections: tuple[tuple[str, tuple[str, ...]], ...] = ()
    outcome: Outcome | None = None
    port: int | None = None
    sent: Sent | None = None
    #: How what the proxy answered differs from the prediction ("" when it does not).
    differs: str = ""


@dataclass(slots=True)
class ServedProxies:
    """The served configuration of each proxy, built once per translation."""

    folder: Path | None
    _result: Result | None = None
    _built: dict[str, Served] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def served(self, result: Result, proxy: ir.Proxy, inputs: list[dict[str, Any]]) -> Served:
        with self._lock:
            if result is not self._result:
                self._result, self._built = result, {}
            known = self._built.get(proxy.name)
        if known is not None:
            return known
        xds = result.served.get(proxy.role)
        messages = (
            [m for by_name in xds.resources.values() for m in by_name.values()] if xds else []
        )
        locate = locator(inputs, self._read)
        built = Served.from_messages(messages, sources_from_proxy(proxy_to_data(proxy), locate))
        with self._lock:
            if result is self._result:
                self._built[proxy.name] = built
        return built

    def _read(self, file: str) -> str | None:
        if self.folder is None:
            return None
        path = (self.folder / file).resolve()
        if not path.is_relative_to(self.folder.resolve()):
            return None  # only files of the served folder
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None


def answer(
    form: ExplainForm,
    served: Served,
    proxy_ports: Mapping[str, int],
    send: Callable[[Request, int], Sent] | None = None,
) -> Answer:
    """Explain the form's request on `served` (the proxy's listener ports by scheme in
    `proxy_ports`); with `send`, send it too and compare."""
    try:
        request = form.request()
    except RequestError as exc:
        return Answer(error=str(exc))
    port, note = choose_port(served, request, proxy_ports.get(request.scheme))
    if port is None:
        return Answer(error=note)
    explanation = explain(served, request, port=port, now=time.time())
    sent = send(request, port) if send is not None else None
    shown = sections(explanation, sent)
    return Answer(
        note=note,
        sections=tuple((title, tuple(lines)) for title, lines in shown),
        outcome=explanation.outcome,
        port=port,
        sent=sent,
        differs=(difference(explanation, sent) or "") if sent is not None else "",
    )
