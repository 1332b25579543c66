"""Parsing manifests: exact SPEC.md field names, and errors that name the field."""

from __future__ import annotations

import pytest

from gw.api import IgnoredDocument, ManifestError, parse_document
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
