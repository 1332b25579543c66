"""Golden files: `cases/NAME.in.yaml` (manifests, exactly as `gw up` reads them) →
`cases/NAME.out.yaml` (what discovery generated, when it did; statuses, the Proxy IR, the
xDS resources).

Cases are translated as `gw controlplane --dir` translates a folder; those under
`cases/up/` as `gw up` does, which also runs the extauth and rate-limit servers and declares
them to the translator (on their default ports). Where a case sits is its only switch.

A change to the generated Envoy config shows as a diff of these files. Regenerate with
`pytest tests/golden --update-goldens` and review the diff.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from gw.discovery import ServiceDiscovery, discover
from gw.snapshot import Snapshot
from gw.store.directory import DirectoryStore
from gw.translator.dump import proxy_to_data, ratelimit_to_data, xds_to_data
from gw.translator.envoy import transform_lua
from gw.translator.options import UP_EXTAUTH, UP_RATELIMIT, Options
from gw.translator.translation import Result, translate

CASES = Path(__file__).parent / "cases"
UP_CASES = CASES / "up"
ALL_CASES = sorted(CASES.glob("*.in.yaml")) + sorted(UP_CASES.glob("*.in.yaml"))
#: Goldens are translated as of this moment (2026-06-01 UTC), so certificate expiry is
#: checked and the output never depends on the day the test runs.
GOLDEN_NOW = 1_780_272_000.0
#: The control plane makes a random key at start; goldens use this one (dumps redact it).
GOLDEN_PASS_KEY = b"golden session pass key, 32 byte"


def options_for(case: Path) -> Options:
    """How the case is translated: as `gw up` does for cases under `cases/up/`."""
    if case.parent == UP_CASES:
        return Options(
            now=GOLDEN_NOW,
            extauth_server=UP_EXTAUTH,
            ratelimit_server=UP_RATELIMIT,
            session_pass_key=GOLDEN_PASS_KEY,
        )
    return Options(now=GOLDEN_NOW, session_pass_key=GOLDEN_PASS_KEY)


def case_id(case: Path) -> str:
    name = case.name[: -len(".in.yaml")]
    return f"up/{name}" if case.parent == UP_CASES else name


def translate_case(case: Path, tmp: Path) -> tuple[Snapshot, Result]:
    folder = tmp / "in"
    folder.mkdir()
    shutil.copy(case, folder / case.name)
    stored = DirectoryStore(folder).scan()
    # The control plane's pipeline: store → discovery → translator.
    snapshot = ServiceDiscovery(Options().namespace)(stored)
    return snapshot, translate(snapshot, options_for(case))


def golden_output(case: Path, tmp: Path) -> dict[str, Any]:
    snapshot, result = translate_case(case, tmp)
    discovery = discover(DirectoryStore(tmp / "in").scan(), Options().namespace)
    statuses = {
        str(key): {
            k: v
            for k, v in status.model_dump(by_alias=True, mode="json").items()
            if v not in ("", [], {})
        }
        for key, status in result.statuses.items()
    }
    out: dict[str, Any] = {}
    if discovery.generated or discovery.stale:
        out["discovery"] = {
            "generated": {
                str(key): upstream.model_dump(by_alias=True, exclude_defaults=True, mode="json")
                for key, upstream in sorted(discovery.generated.items())
            },
            "kept": sorted(str(key) for key in discovery.kept),
            "stale": sorted(str(key) for key in discovery.stale),
        }
    out |= {
        "statuses": statuses,
        "inputErrors": [str(e) for e in snapshot.errors if e.key is None],
        "proxy": proxy_to_data(result.proxy),
        "xds": xds_to_data(result.xds),
    }
    # Cases with one proxy show it above; the others (gateways naming other proxies) too.
    for proxy in result.proxies[1:]:
        out.setdefault("otherProxies", {})[proxy.name] = {
            "proxy": proxy_to_data(proxy),
            "xds": xds_to_data(result.served[proxy.role]),
        }
    proxy_statuses = {
        name: status.model_dump(by_alias=True, mode="json", exclude_defaults=True)
        for name, status in result.proxy_statuses.items()
    }
    if len(proxy_statuses) > 1 or any(s["state"] != "Accepted" for s in proxy_statuses.values()):
        out["proxyStatuses"] = proxy_statuses
    extauth = xds_to_data(result.extauth)
    if extauth:  # what the extauth servers are served (cases without AuthConfigs omit it)
        out["extauth"] = extauth
    ratelimit = ratelimit_to_data(result.ratelimit)
    if ratelimit:  # what the rate-limit servers are served (only cases with configs)
        out["ratelimit"] = ratelimit
    return _without_lua_runtime(out)


def _without_lua_runtime(data: Any) -> Any:
    """Transformation scripts with their fixed runtime (the same in every script, tested on
    its own) shown as a marker: a golden shows what the case compiled."""
    if isinstance(data, dict):
        return {k: _without_lua_runtime(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_without_lua_runtime(v) for v in data]
    if isinstance(data, str) and transform_lua.runtime() in data:
        return data.replace(transform_lua.runtime(), "-- <gw transformation runtime>\n")
    return data


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (status reasons) as literal blocks, so diffs read like the text."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _dump(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=100)


@pytest.mark.parametrize("case", ALL_CASES, ids=case_id)
def test_golden(case: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    out_path = case.with_name(case.name.replace(".in.yaml", ".out.yaml"))
    actual = _dump(golden_output(case, tmp_path))
    if request.config.getoption("--update-goldens"):
        out_path.write_text(actual)
    assert out_path.exists(), f"{out_path.name} is missing: run pytest --update-goldens"
    assert actual == out_path.read_text(), f"{case.name} produced other output than {out_path.name}"


def test_error_cases_are_at_least_a_quarter() -> None:
    """STYLE.md §5.5: bad input is a first-class case."""
    names = [p.name for p in ALL_CASES]
    errors = [n for n in names if any(w in n for w in ("-invalid-", "-missing-", "-conflict-"))]
    assert len(errors) * 4 >= len(names), f"only {len(errors)} of {len(names)} are error cases"
