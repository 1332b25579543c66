"""Discovery's rules: names, which services, and who owns a discovered upstream."""

from __future__ import annotations

import hashlib

import pytest
import yaml

from gw.api import ManifestError, ResourceKey, Upstream, parse_document
from gw.api.orch import sanitize_name, service_destination_name, service_upstream_name
from gw.discovery import ServiceDiscovery
from gw.discovery.services import HASH_ANNOTATION, content_hash, discover, owned
from gw.snapshot import InputError, Snapshot, Source


def snapshot(*manifests: str) -> Snapshot:
    resources = [parse_document(doc) for m in manifests for doc in yaml.safe_load_all(m)]
    return Snapshot(resources={r.key: r for r in resources})


def service(
    name: str, namespace: str = "default", ports: str = "[{port: 80}]", extra: str = ""
) -> str:
    return f"""
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: {namespace}{extra}}}
spec: {{selector: {{app: {name}}}, ports: {ports}}}
"""


def key(name: str, namespace: str = "gw-system") -> ResourceKey:
    return ResourceKey("Upstream", namespace, name)


@pytest.mark.parametrize(
    ("raw", "sanitized"),
    [
        ("default-petstore-8080", "default-petstore-8080"),
        ("Team.Payments-API_v2-80", "team-payments-api-v2-80"),
        ("a*b/c.d:e_f g", "a-b-c-d-e-f-g"),
        ("x[1]-\"quoted\"-'single'\n-80", "x1-quoted-single-80"),
    ],
)
def test_sanitize_replaces_and_drops_characters(raw: str, sanitized: str) -> None:
    assert sanitize_name(raw) == sanitized


def test_long_names_are_cut_with_a_hash_of_the_whole_name() -> None:
    raw = "team-" + "very-long-service-name-" * 3 + "8080"
    name = sanitize_name(raw)
    assert len(raw) > 63 and len(name) == 63
    digest = hashlib.md5(raw.encode(), usedforsecurity=False).hexdigest()
    assert name == f"{raw[:31]}-{digest}"[:63]
    # Two names that share the first 31 characters stay apart.
    assert sanitize_name(raw + "1") != name


def test_upstream_and_destination_names() -> None:
    assert service_upstream_name("default", "petstore", 8080) == "default-petstore-8080"
    assert service_upstream_name("gw-system", "gateway-proxy", 8080) == (
        "gw-system-gateway-proxy-8080"
    )
    assert service_destination_name("ns", "svc", 80) == "orch-svc:ns-svc-80"


def test_one_upstream_per_tcp_port_in_the_gateway_namespace() -> None:
    found = discover(
        snapshot(
            service(
                "web",
                ports="[{name: http, port: 80}, {name: h2, port: 8443}, {port: 53, protocol: UDP}]",
                extra=", labels: {team: a}",
            )
        ),
        "gw-system",
    )
    assert sorted(found.generated) == [key("default-web-80"), key("default-web-8443")]
    upstream = found.generated[key("default-web-80")]
    assert upstream.metadata.labels == {"discovered_by": "orchplugin"}
    assert upstream.spec.orch is not None
    assert upstream.spec.orch.model_dump(exclude_none=True) == {
        "service_name": "web",
        "service_namespace": "default",
        "service_port": 80,
        "selector": {"app": "web"},
    }
    assert upstream.spec.discovery_metadata is not None
    assert upstream.spec.discovery_metadata.labels == {"team": "a"}
    assert owned(upstream)


def test_skipped_services() -> None:
    found = discover(
        snapshot(
            service("kube-dns", "kube-system"),
            service(
                "forced", "kube-system", extra=', annotations: {gw.vendor.io/discover: "true"}'
            ),
            service("hidden", extra=', annotations: {gw.vendor.io/discover: "false"}'),
            service("no-ports", ports="[]"),
        ),
        "gw-system",
    )
    assert sorted(found.generated) == [key("kube-system-forced-80")]


def test_discovery_can_be_turned_off_in_settings() -> None:
    settings = """
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {name: default, namespace: gw-system}
spec: {discovery: {udsOptions: {enabled: false}}}
"""
    assert discover(snapshot(settings, service("web")), "gw-system").generated == {}


def test_hand_edits_make_an_upstream_the_users() -> None:
    generated = discover(snapshot(service("web")), "gw-system").generated[key("default-web-80")]
    data = generated.model_dump(by_alias=True, exclude_defaults=True, mode="json")

    # Unedited (e.g. written by `gw discovery`): discovery owns it and serves its own version.
    assert owned(Upstream.model_validate(data))
    stale_copy = snapshot(service("web"), yaml.safe_dump(data))
    assert discover(stale_copy, "gw-system").kept == frozenset()

    # Any edit (spec, labels, other annotations) ends discovery's ownership.
    for edit in (
        lambda d: d["spec"].update(connectionConfig={"connectTimeout": "1s"}),
        lambda d: d["metadata"]["labels"].update(owner="me"),
        lambda d: d["metadata"]["annotations"].update(note="mine"),
    ):
        edited = yaml.safe_load(yaml.safe_dump(data))
        edit(edited)
        assert not owned(Upstream.model_validate(edited))
        found = discover(snapshot(service("web"), yaml.safe_dump(edited)), "gw-system")
        assert found.kept == {key("default-web-80")}
        assert found.served == {}
        assert ServiceDiscovery("gw-system")(
            snapshot(service("web"), yaml.safe_dump(edited))
        ).resources[key("default-web-80")] == Upstream.model_validate(edited)


def test_a_hand_written_upstream_keeps_its_name() -> None:
    mine = """
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {name: default-web-80, namespace: gw-system}
spec: {static: {hosts: [{addr: 10.0.0.1, port: 80}]}}
"""
    found = discover(snapshot(service("web"), mine), "gw-system")
    assert found.kept == {key("default-web-80")}
    assert not owned(snapshot(mine).resources[key("default-web-80")])


def test_stale_upstreams_are_those_discovery_owns_without_a_service() -> None:
    generated = discover(snapshot(service("old")), "gw-system").generated[key("default-old-80")]
    data = yaml.safe_dump(generated.model_dump(by_alias=True, exclude_defaults=True, mode="json"))
    edited = data.replace("servicePort: 80", "servicePort: 81")
    assert discover(snapshot(data), "gw-system").stale == {key("default-old-80")}
    assert discover(snapshot(edited), "gw-system").stale == frozenset()


def test_the_hash_ignores_itself_and_how_yaml_spells_defaults() -> None:
    generated = discover(snapshot(service("web")), "gw-system").generated[key("default-web-80")]
    assert generated.metadata.annotations[HASH_ANNOTATION] == content_hash(generated)
    data = generated.model_dump(by_alias=True, exclude_defaults=True, mode="json")
    data["spec"]["orch"]["selector"] = {"app": "web"}
    data["spec"]["static"] = None
    assert content_hash(Upstream.model_validate(data)) == content_hash(generated)


def test_a_service_whose_manifest_breaks_is_not_gone() -> None:
    """Its upstreams stay (to be rejected with the reason) and are not stale."""
    web = ResourceKey("Service", "default", "web")
    broken = Snapshot(errors=(InputError(Source("svc.yaml", 1), "spec.ports: bad", web),))
    stage = ServiceDiscovery("gw-system")
    assert key("default-web-80") in stage(snapshot(service("web"))).resources
    assert key("default-web-80") in stage(broken).resources
    assert key("default-web-80") not in ServiceDiscovery("gw-system")(broken).resources

    generated = discover(snapshot(service("web")), "gw-system").generated[key("default-web-80")]
    stored = Snapshot(resources={generated.key: generated}, errors=broken.errors)
    assert discover(stored, "gw-system").stale == frozenset()
    assert discover(Snapshot(resources={generated.key: generated}), "gw-system").stale == {
        key("default-web-80")
    }


def test_an_upstream_manifest_that_breaks_keeps_its_name() -> None:
    """A generated upstream would hide the broken manifest's error behind `Accepted` (found
    by the reliability suite's property tests): the name stays the broken manifest's, which
    the translator rejects, serving its last accepted version."""
    web = snapshot(service("web"))
    broken = InputError(Source("mine.yaml", 1), "spec: not an object", key("default-web-80"))
    with_broken = Snapshot(resources=web.resources, errors=(broken,))
    assert discover(with_broken, "gw-system").kept == {key("default-web-80")}
    assert key("default-web-80") not in ServiceDiscovery("gw-system")(with_broken).resources
    assert key("default-web-80") in ServiceDiscovery("gw-system")(web).resources


def test_a_discovery_namespace_that_is_no_namespace_rejects_the_settings() -> None:
    """Discovered Upstreams are resources in `discoveryNamespace`: one that is not a valid
    namespace is refused with the Settings (naming the field), and discovery writes to the
    install's namespace, as without Settings, instead of failing. Found by the random-edit
    property test (`discoveryNamespace: UPSTREAMS` stopped every translation)."""
    settings = """
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {name: default, namespace: gw-system}
spec: {discoveryNamespace: UPSTREAMS}
"""
    with pytest.raises(ManifestError) as refused:
        parse_document(yaml.safe_load(settings))
    assert "spec.discoveryNamespace: not a valid namespace" in str(refused.value)
    settings_key = ResourceKey("Settings", "gw-system", "default")
    broken = InputError(Source("settings.yaml", 1), str(refused.value), settings_key)
    found = ServiceDiscovery("gw-system")(
        Snapshot(resources=snapshot(service("web")).resources, errors=(broken,))
    )
    assert key("default-web-80") in found.resources
