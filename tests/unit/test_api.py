"""Parsing manifests: exact SPEC.md field names, and errors that name the field."""

from __future__ import annotations

import copy
import pickle

import pytest

from gw.api import IgnoredDocument, ManifestError, ResourceKey, parse_document
from gw.api.virtualservice import VirtualService

SPEC_EXAMPLE = {
    "apiVersion": "gateway.vendor.io/v1",
    "kind": "VirtualService",
    "metadata": {"name": "petstore", "namespace": "gw-system"},
    "spec": {
        "sslConfig": {"secretRef": {"name": "tls", "namespace": "gw-system"}},
        "virtualHost": {
            "domains": ["*"],
            "routes": [
                {
                    "matchers": [{"prefix": "/"}],
                    "routeAction": {
                        "single": {"upstream": {"name": "u", "namespace": "gw-system"}}
                    },
                },
                {
                    "matchers": [{"prefix": "/svc"}],
                    "routeAction": {
                        "single": {"orch": {"ref": {"name": "s", "namespace": "d", "port": 8080}}}
                    },
                },
            ],
            "options": {
                "jwt": {
                    "providers": {
                        "p": {
                            "issuer": "https://i",
                            "jwks": {
                                "remote": {
                                    "url": "http://x/keys",
                                    "upstreamRef": {"name": "u", "namespace": "n"},
                                }
                            },
                            "tokenSource": {"headers": [{"header": "x-token"}]},
                            "claimsToHeaders": [{"claim": "email", "header": "x-email"}],
                        }
                    }
                },
                "rbac": {
                    "policies": {
                        "admins": {
                            "permissions": {"methods": ["GET"], "pathPrefix": "/admin"},
                            "principals": [{"jwtPrincipal": {"claims": {"role": "admin"}}}],
                        }
                    }
                },
                "extauth": {"configRef": {"name": "oidc", "namespace": "gw-system"}},
                "stagedTransformations": {
                    "early": {
                        "requestTransforms": [
                            {
                                "requestTransformation": {
                                    "transformationTemplate": {
                                        "extractors": {
                                            "org": {
                                                "header": "x-user",
                                                "regex": "org=(.*)",
                                                "subgroup": 1,
                                            }
                                        },
                                        "headers": {"x-org": {"text": "org {{ org }}"}},
                                    }
                                }
                            }
                        ]
                    }
                },
                "headerManipulation": {"requestHeadersToRemove": ["authorization"]},
            },
        },
    },
}


def test_spec_fields_parse() -> None:
    vs = parse_document(SPEC_EXAMPLE)
    assert isinstance(vs, VirtualService)
    options = vs.spec.virtual_host.options  # type: ignore[union-attr]
    assert options is not None and options.jwt is not None
    assert options.jwt.providers["p"].token_source.headers[0].header == "x-token"  # type: ignore[union-attr]


def test_snake_case_spelling_is_refused() -> None:
    doc = {**SPEC_EXAMPLE, "spec": {"virtual_host": {}}}
    with pytest.raises(ManifestError) as info:
        parse_document(doc)
    assert [(p.field, p.message) for p in info.value.problems] == [
        ("spec.virtual_host", "unknown field")
    ]


def test_other_kinds_are_ignored_not_errors() -> None:
    with pytest.raises(IgnoredDocument):
        parse_document({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}})


def test_bad_duration_names_the_field() -> None:
    doc = {
        "apiVersion": "gw.vendor.io/v1",
        "kind": "Settings",
        "metadata": {"name": "default", "namespace": "gw-system"},
        "spec": {"extauth": {"requestTimeout": "soon"}},
    }
    with pytest.raises(ManifestError) as info:
        parse_document(doc)
    (problem,) = info.value.problems
    assert problem.field == "spec.extauth.requestTimeout"
    assert "'soon' is not a duration" in problem.message


def test_not_a_mapping() -> None:
    with pytest.raises(ManifestError, match="a manifest must be a mapping, not a list"):
        parse_document([1, 2])


ORCH_SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7"},
    "spec": {
        "clusterIP": "10.96.0.1",
        "ipFamilies": ["IPv4"],
        "ports": [{"name": "http", "port": 80, "targetPort": "web", "nodePort": 30080}],
        "selector": {"app": "web"},
        "type": "NodePort",
    },
    "status": {"loadBalancer": {}},
}


def test_orchestrator_objects_are_read_leniently() -> None:
    """Fields the orchestrator writes and gw does not use are ignored, not errors."""
    from gw.api.orch import Endpoints, Pod, Service

    service = parse_document(ORCH_SERVICE)
    assert isinstance(service, Service)
    assert service.spec.ports[0].target_port == "web"
    assert service.port(80) is not None and service.port(81) is None
    endpoints = parse_document(
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": "web"},
            "subsets": [
                {
                    "addresses": [
                        {
                            "ip": "10.0.0.1",
                            "nodeName": "n",
                            "targetRef": {"kind": "Pod", "name": "p", "uid": "x"},
                        }
                    ],
                    "ports": [{"name": "http", "port": 8080, "appProtocol": "http"}],
                }
            ],
        }
    )
    assert isinstance(endpoints, Endpoints)
    assert endpoints.subsets[0].addresses[0].target_ref is not None
    pod = parse_document(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "labels": {"app": "web"}},
            "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}]},
        }
    )
    assert isinstance(pod, Pod) and pod.ready and pod.status.pod_ip == "10.0.0.1"


def test_orchestrator_objects_still_check_what_gw_reads() -> None:
    bad = dict(ORCH_SERVICE, spec={"ports": [{"port": "eighty"}]})
    with pytest.raises(ManifestError) as exc:
        parse_document(bad)
    assert exc.value.problems[0].field == "spec.ports[0].port"
    with pytest.raises(ManifestError, match="apiVersion"):
        parse_document(dict(ORCH_SERVICE, apiVersion="apps/v1"))


@pytest.mark.parametrize(
    ("name", "namespace", "problem"),
    [
        ("a" * 253, "n" * 63, None),
        ("web.v2-a", "team-1", None),
        ("a" * 254, "default", "metadata.name: a name must be no more than 253 characters"),
        ("../x", "default", "metadata.name: not a valid name: Kubernetes requires a DNS-1123 "),
        ("a/b", "default", "metadata.name: not a valid name"),
        ("Web", "default", "metadata.name: not a valid name"),
        ("web-", "default", "metadata.name: not a valid name"),
        ("web", "n" * 64, "metadata.namespace: a namespace must be no more than 63 characters"),
        ("web", "team.a", "metadata.namespace: not a valid namespace: Kubernetes requires a "),
    ],
)
def test_names_and_namespaces_follow_the_orchestrator(
    name: str, namespace: str, problem: str | None
) -> None:
    doc = {
        "apiVersion": "gw.vendor.io/v1",
        "kind": "Upstream",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": 80}]}},
    }
    if problem is None:
        assert parse_document(doc).key == (("Upstream", namespace, name))
        return
    with pytest.raises(ManifestError) as refused:
        parse_document(doc)
    assert refused.value.key == ("Upstream", namespace, name)
    assert refused.value.details().startswith(problem)


@pytest.mark.parametrize(
    "doc",
    [
        {
            "apiVersion": "gw.vendor.io/v1",
            "kind": "Upstream",
            "metadata": {"name": "u", "annotations": None, "labels": None},
            "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": 80}]}, "sslConfig": None},
        },
        {
            "apiVersion": "gateway.vendor.io/v1",
            "kind": "VirtualService",
            "metadata": {"name": "vs", "annotations": None},
            "spec": {"virtualHost": {"domains": None, "routes": [{"matchers": None}]}},
        },
    ],
    ids=["Upstream", "VirtualService"],
)
def test_explicit_nulls_are_unset_fields(doc: dict[str, object]) -> None:
    """`annotations:` with nothing after it, as the established gateway's guides write: the
    orchestrator's API server prunes such nulls, so they mean "take the default"."""
    resource = parse_document(doc)
    assert resource.metadata.annotations == {}
    assert resource.metadata.labels == {}
    assert "annotations" not in resource.metadata.model_fields_set


def test_claim_matcher_takes_a_yaml_boolean() -> None:
    """`email_verified: true` (a YAML boolean) is the claim value `true`, as Kubernetes
    stores the manifest; a number is still refused."""
    from pydantic import ValidationError

    from gw.api.rbac import JwtPrincipal

    principal = JwtPrincipal.model_validate(
        {"claims": {"email_verified": True, "off": False}, "matcher": "BOOLEAN"}
    )
    assert principal.claims == {"email_verified": "true", "off": "false"}
    with pytest.raises(ValidationError):
        JwtPrincipal.model_validate({"claims": {"n": 3}})


def test_unknown_kinds_of_gw_groups_are_errors_naming_the_resource() -> None:
    """A misspelt kind in gw's own groups must get a status, not vanish like a Deployment."""
    doc = {"apiVersion": "gateway.vendor.io/v1", "kind": "Foo", "metadata": {"name": "x"}}
    with pytest.raises(ManifestError) as info:
        parse_document(doc)
    assert info.value.key == ("Foo", "default", "x")
    assert [(p.field, p.message) for p in info.value.problems] == [
        (
            "kind",
            "Foo is not a kind of gateway.vendor.io (its kinds: Gateway, HttpListenerOption, "
            "MatchableHttpGateway, MatchableTcpGateway, RouteOption, RouteTable, "
            "VirtualHostOption, VirtualService); check the spelling",
        )
    ]
    not_read = {**doc, "kind": "ListenerOption"}
    with pytest.raises(ManifestError, match="not supported by gw yet"):
        parse_document(not_read)
    with pytest.raises(IgnoredDocument):
        parse_document({**doc, "apiVersion": "example.com/v1"})


def test_models_with_the_same_fields_set_share_one_set_that_copies_do_not_change() -> None:
    """At 100,000 resources, each model's own set of set field names is 190 MB: they are
    shared, which is safe because models are frozen and `model_copy` copies the set."""
    from pydantic import ValidationError

    from gw.api.meta import ResourceRef

    a, b = ResourceRef(name="a"), ResourceRef(name="b")
    assert a.model_fields_set is b.model_fields_set == {"name"}
    c = a.model_copy(update={"namespace": "other"})
    assert c.model_fields_set == {"name", "namespace"}
    assert a.model_fields_set == b.model_fields_set == {"name"}
    with pytest.raises(ValidationError):
        a.name = "changed"  # type: ignore[misc]


def test_models_keep_their_fields_in_a_dictionary_of_shared_keys() -> None:
    """Each model's field dictionary shares its keys with the others of its class (100 MB
    less at 100,000 VirtualServices); the models read, compare, copy and dump as with
    pydantic's own dictionaries."""
    import copy
    import sys

    from gw.api.meta import Metadata

    doc = {"name": "a", "namespace": "n", "labels": {"app": "x"}}
    one, two = Metadata.model_validate(doc), Metadata.model_validate({**doc, "name": "b"})
    own = dict(one.__dict__)  # a dictionary of its own, as pydantic makes
    assert sys.getsizeof(one.__dict__) < sys.getsizeof(own)
    assert sys.getsizeof(two.__dict__) < sys.getsizeof(dict(two.__dict__))
    assert list(one.__dict__) == list(Metadata.model_fields)
    assert (one.name, one.labels, one.uid) == ("a", {"app": "x"}, None)
    assert one == Metadata.model_validate(doc) and one != two
    assert one.model_dump(by_alias=True, exclude_defaults=True) == doc
    copied = one.model_copy(update={"name": "c"})
    assert (copied.name, one.name) == ("c", "a")
    assert copy.deepcopy(one) == one


def test_a_model_whose_dictionary_is_not_its_class_fields_keeps_its_own() -> None:
    """Sharing keys needs every field (pydantic always gives them); a model whose
    dictionary holds other names keeps it, values and all, rather than failing."""
    from gw.api.meta import Metadata, _share_keys

    model = Metadata(name="a")
    partial = {"name": "a", "namespace": "n"}
    object.__setattr__(model, "__dict__", partial)
    _share_keys(model)
    assert model.__dict__ is partial and model.namespace == "n"


def test_resource_key_survives_pickle_and_copy():
    """Keys cross process boundaries (the store's readers) and may be copied: each way
    gives back an equal key of the same class, with its parts in place."""
    key = ResourceKey("VirtualService", "default", "petstore")
    for again in (pickle.loads(pickle.dumps(key)), copy.deepcopy(key), copy.copy(key)):
        assert again == key
        assert type(again) is ResourceKey
        assert again.kind == "VirtualService"
        assert (again.namespace, again.name) == ("default", "petstore")
