"""The deployment files under `deploy/`: the Helm chart rendered with Helm's own template
engine (the Helm 4 SDK of `helm-python-sdk`; no `helm` binary is needed), and the plain
manifests, which are that chart rendered with its default values and a Namespace.

`python -m tests.support.deploy` rewrites `deploy/manifests/` after a chart change (and
`gw crds --out deploy/crds --out deploy/helm/gw/crds` after a model change).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "gw"
MANIFESTS = ROOT / "deploy" / "manifests"
CRDS = ROOT / "deploy" / "crds"
NAMESPACE = "gw-system"
#: The plain manifests: the chart's defaults, plus the Namespace Helm would create.
PLAIN_VALUES: dict[str, Any] = {"namespace": {"create": True}}
HEADER = (
    "# Rendered from deploy/helm/gw by `python -m tests.support.deploy`: edit the chart.\n"
    "# Apply the CRDs first: kubectl apply -f deploy/crds/\n"
)


def render(values: dict[str, Any] | None = None, namespace: str = NAMESPACE) -> dict[str, str]:
    """Template file name (`gw.yaml`) → rendered text, as `helm template` makes it."""
    import helm_python as helm

    with helm.Chart.load(str(CHART)) as chart:
        rendered = chart.render(values or {}, name="gw", namespace=namespace)
    return {Path(path).name: text for path, text in sorted(rendered.items())}


def documents(rendered: dict[str, str]) -> list[dict[str, Any]]:
    out = []
    for text in rendered.values():
        out.extend(d for d in yaml.safe_load_all(text) if d)
    return out


#: The order `kubectl apply -f deploy/manifests/` takes them in (file names sort so).
ORDER = (
    "namespace", "gw", "discovery", "gateway-proxy", "extauth", "redis", "settings", "webhook",
    "ratelimit", "certgen", "networkpolicy",
)  # fmt: skip


def plain_manifests() -> dict[str, str]:
    """File name (`01-gw.yaml`) → content of `deploy/manifests/`."""
    rendered = render(PLAIN_VALUES)
    assert sorted(rendered) == sorted(f"{n}.yaml" for n in ORDER), "a template is not in ORDER"
    return {
        f"{ORDER.index(name[:-5]):02d}-{name}": HEADER + text.lstrip("\n")
        for name, text in rendered.items()
        if text.strip()
    }


def write_manifests() -> None:
    MANIFESTS.mkdir(parents=True, exist_ok=True)
    for old in MANIFESTS.glob("*.yaml"):
        old.unlink()
    for name, text in plain_manifests().items():
        (MANIFESTS / name).write_text(text)


if __name__ == "__main__":
    write_manifests()
