"""`jwks.local.key` → a JSON Web Key Set document, the only form Envoy's `local_jwks` takes.

The control plane converts, so that stage 2 stays mechanical and a bad key is a status on
the VirtualService instead of a configuration Envoy refuses. Accepted inputs (REFERENCE.md
§4.3, widened to EC and Ed25519 keys): a PEM public key (SubjectPublicKeyInfo or PKCS#1
RSA), a PEM certificate (its public key is used), one JWK, or a JWKS. Private and symmetric
keys are refused: they are secrets, and a manifest's options end up in config dumps.
"""

from __future__ import annotations

import base64
import functools
import json
import warnings
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from joserfc.errors import JoseError
from joserfc.jwk import JWKRegistry

#: The JWS algorithm that goes with each EC curve (RFC 7518 §3.4).
_EC_ALGORITHMS = {"secp256r1": ("P-256", "ES256"), "secp384r1": ("P-384", "ES384")}
_EC_ALGORITHMS["secp521r1"] = ("P-521", "ES512")
_PUBLIC_KTY = frozenset({"RSA", "EC", "OKP"})
_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


class JwksError(ValueError):
    """Why a key cannot be used; the message is safe to show (it never quotes the key)."""


@functools.lru_cache(maxsize=256)
def local_jwks(text: str) -> str:
    """The JWKS document (compact JSON, sorted keys) for a `jwks.local.key` value.

    Kept per text (a pure function of it; what raises is not kept): a JWKS takes about
    65 µs to check, and every virtual host whose options name a provider converts its key
    again, about as much as the rest of a plain host's translation."""
    stripped = text.strip()
    if not stripped:
        raise JwksError("the key is empty; paste a PEM public key, a JWK or a JWKS")
    if stripped.startswith("{"):
        keys = _json_keys(stripped)
    elif "-----BEGIN" in stripped:
        keys = [_pem_key(stripped)]
    else:
        raise JwksError(
            "not a PEM public key (no -----BEGIN PUBLIC KEY----- block) nor a JWK / JWKS JSON"
        )
    return json.dumps({"keys": keys}, sort_keys=True, separators=(",", ":"))


def holds_key_secrets(text: str) -> bool:
    """True when a `jwks.local.key` value holds private or symmetric key material: it is
    refused as a key, and views of the input (the admin API, `gwctl debug yaml`) hide it."""
    if "PRIVATE KEY-----" in text:
        return True
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        return False
    keys = document.get("keys", [document]) if isinstance(document, dict) else []
    return any(isinstance(k, dict) and bool(_PRIVATE_MEMBERS & k.keys()) for k in keys)


def _pem_key(pem: str) -> dict[str, Any]:
    label = pem.split("-----BEGIN ", 1)[1].split("-----", 1)[0]
    if "PRIVATE" in label:
        raise JwksError(
            f"this is a PEM {label.lower()}: give the matching public key; a private key must "
            "never be put in a manifest"
        )
    public: object
    try:
        if label in ("CERTIFICATE", "X509 CERTIFICATE"):
            public = x509.load_pem_x509_certificate(pem.encode()).public_key()
        else:
            public = serialization.load_pem_public_key(pem.encode())
    except (ValueError, TypeError) as exc:
        raise JwksError(
            f"the PEM block does not parse as a public key ({_first_line(exc)})"
        ) from None
    return _jwk(public)


def _jwk(public: object) -> dict[str, Any]:
    if isinstance(public, rsa.RSAPublicKey):
        rsa_numbers = public.public_numbers()
        if public.key_size < 2048:
            raise JwksError(f"the RSA key has {public.key_size} bits; use at least 2048")
        return {
            "kty": "RSA",
            "alg": "RS256",
            "use": "sig",
            "n": _b64(rsa_numbers.n),
            "e": _b64(rsa_numbers.e),
        }
    if isinstance(public, ec.EllipticCurvePublicKey):
        curve = _EC_ALGORITHMS.get(public.curve.name)
        if curve is None:
            raise JwksError(f"EC curve {public.curve.name} is not usable for JWT; use P-256")
        size = (public.curve.key_size + 7) // 8
        numbers = public.public_numbers()
        return {
            "kty": "EC",
            "crv": curve[0],
            "alg": curve[1],
            "use": "sig",
            "x": _b64(numbers.x, size),
            "y": _b64(numbers.y, size),
        }
    if isinstance(public, ed25519.Ed25519PublicKey):
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        x = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
        return {"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "x": x}
    raise JwksError(
        f"{type(public).__name__.lstrip('_')} keys cannot verify JWTs; use an RSA, EC or "
        "Ed25519 public key"
    )


def _json_keys(text: str) -> list[dict[str, Any]]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JwksError(f"the key looks like JSON but does not parse: {exc}") from None
    if not isinstance(document, dict):
        raise JwksError("a JWK or JWKS is a JSON object")
    raw_keys = document.get("keys", [document])
    if not isinstance(raw_keys, list) or not raw_keys:
        raise JwksError("the JWKS has no keys; `keys` must be a non-empty list")
    return [_checked_jwk(key, i) for i, key in enumerate(raw_keys)]


def _checked_jwk(key: object, index: int) -> dict[str, Any]:
    where = f"key {index}"
    if not isinstance(key, dict):
        raise JwksError(f"{where} is not a JSON object")
    kty = key.get("kty")
    if kty not in _PUBLIC_KTY:
        raise JwksError(f"{where} has kty {kty!r}; only public RSA, EC and OKP keys are accepted")
    private = sorted(_PRIVATE_MEMBERS & key.keys())
    if private:
        raise JwksError(
            f"{where} holds private key members ({', '.join(private)}); give the public key only"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            JWKRegistry.import_key(key)
    except (JoseError, ValueError, TypeError, KeyError) as exc:
        raise JwksError(f"{where} is not a valid {kty} key ({_first_line(exc)})") from None
    return key


def _b64(number: int, size: int | None = None) -> str:
    length = size if size is not None else max(1, (number.bit_length() + 7) // 8)
    return base64.urlsafe_b64encode(number.to_bytes(length, "big")).rstrip(b"=").decode()


def _first_line(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:160].strip()
