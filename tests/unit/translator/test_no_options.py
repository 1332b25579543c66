"""A route or a virtual host that sets no options skips the option builders
(`RouteBuilder.build`, `virtualhosts.build_virtual_host`): for every golden input, the
translation with that shortcut is the translation without it, Proxies and statuses alike.

Each module says when it takes the shortcut (`sets_nothing`); the translation without it
is made with that answering no."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gw.discovery import ServiceDiscovery
from gw.store.directory import DirectoryStore
from gw.translator.gateway import routes, virtualhosts
from gw.translator.options import Options
from gw.translator.translation import Result, translate
from tests.golden.test_golden import CASES, GOLDEN_NOW


def _without_shortcut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(routes, "sets_nothing", lambda options: False)
    monkeypatch.setattr(virtualhosts, "sets_nothing", lambda options: False)


def _translated(case: Path, folder: Path) -> Result:
    shutil.copy(case, folder / case.name)
    snapshot = ServiceDiscovery(Options().namespace)(DirectoryStore(folder).scan())
    return translate(snapshot, Options(now=GOLDEN_NOW))


@pytest.mark.parametrize("case", sorted(CASES.glob("*.in.yaml")), ids=lambda p: p.name[:-8])
def test_no_options_translate_as_the_builders_would(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_shortcut = _translated(case, tmp_path)
    _without_shortcut(monkeypatch)
    without = _translated(case, tmp_path)
    assert with_shortcut.proxies == without.proxies
    assert with_shortcut.statuses == without.statuses


def test_the_shortcut_is_taken_for_a_plain_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test above compares something: a route and a host without options do not reach
    the builders the shortcut skips."""
    reached: list[str] = []

    def counted(name: str, builder: object) -> object:
        def wrapper(*args: object, **kwargs: object) -> object:
            reached.append(name)
            return builder(*args, **kwargs)  # type: ignore[operator]

        return wrapper

    monkeypatch.setattr(routes, "build_retries", counted("route", routes.build_retries))
    monkeypatch.setattr(virtualhosts, "build_retries", counted("host", virtualhosts.build_retries))
    (tmp_path / "vs.yaml").write_text(
        "apiVersion: gateway.vendor.io/v1\nkind: VirtualService\n"
        "metadata: {name: plain, namespace: gw-system}\n"
        "spec:\n  virtualHost:\n    domains: [a.test]\n    routes:\n"
        "      - matchers: [{prefix: /}]\n        directResponseAction: {status: 200}\n"
    )
    snapshot = DirectoryStore(tmp_path).scan()
    result = translate(snapshot, Options(now=GOLDEN_NOW))
    assert [s.state for s in result.statuses.values()] == ["Accepted"]
    assert reached == []
    _without_shortcut(monkeypatch)
    translate(snapshot, Options(now=GOLDEN_NOW))
    assert reached == ["route", "host"]
