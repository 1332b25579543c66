"""`jwks.local.key` → JWKS: the converted key verifies tokens signed with the private half."""

from __future__ import annotations

import datetime
import json

import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import NameOID

from gw.translator.gateway import jwks
from gw.translator.gateway.jwks import JwksError, holds_key_secrets, local_jwks
from tests.support.tokens import SigningKey


def verify_with_jwks(document: str, token: str) -> dict[str, object]:
    """Verify `token` with the single key of `document`, as a JOSE library would."""
    keys = jwt.PyJWKSet.from_json(document).keys
    assert len(keys) == 1
    claims: dict[str, object] = jwt.decode(token, keys[0], algorithms=[keys[0].algorithm_name])
    return claims


@pytest.mark.parametrize("kind", ["RSA", "EC"])
def test_pem_public_key_becomes_a_one_key_jwks(kind: str) -> None:
    key = SigningKey(kind)
    document = local_jwks(key.public_pem())
    (jwk,) = json.loads(document)["keys"]
    assert jwk["kty"] == kind and jwk["use"] == "sig" and jwk["alg"] == key.algorithm
    assert "kid" not in jwk
    assert verify_with_jwks(document, key.token("https://i.test"))["sub"] == "alice"


def test_pkcs1_rsa_public_key() -> None:
    key = SigningKey("RSA")
    pkcs1 = (
        key.private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.PKCS1)
        .decode()
    )
    assert pkcs1.startswith("-----BEGIN RSA PUBLIC KEY-----")
    assert verify_with_jwks(local_jwks(pkcs1), key.token("https://i.test"))["iss"]


def test_certificate_gives_its_public_key() -> None:
    key = SigningKey("EC")
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "idp")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.private.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key.private, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    assert verify_with_jwks(local_jwks(pem), key.token("https://i.test"))["iss"]


def test_p384_and_ed25519() -> None:
    p384 = ec.generate_private_key(ec.SECP384R1()).public_key()
    ed = ed25519.Ed25519PrivateKey.generate().public_key()
    for public, alg in ((p384, "ES384"), (ed, "EdDSA")):
        pem = public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode()
        assert json.loads(local_jwks(pem))["keys"][0]["alg"] == alg


def test_jwk_and_jwks_json_are_kept() -> None:
    one, two = SigningKey("RSA", kid="a"), SigningKey("EC", kid="b")
    single = json.loads(local_jwks(json.dumps(one.jwk())))
    assert single == {"keys": [one.jwk()]}
    both = json.loads(local_jwks(json.dumps({"keys": [one.jwk(), two.jwk()]})))
    assert [k["kid"] for k in both["keys"]] == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the key is empty"),
        ("hello", "not a PEM public key"),
        (
            "-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----",
            "the PEM block does not parse as a public key",
        ),
        ('{"keys": []}', "the JWKS has no keys"),
        ('{"kty": "oct", "k": "c2VjcmV0"}', "only public RSA, EC and OKP keys are accepted"),
        ('{"kty": "RSA", "n": "abc", "e": "AQAB"}', "key 0 is not a valid RSA key"),
        ("{not json", "the key looks like JSON but does not parse"),
    ],
)
def test_unusable_keys(text: str, message: str) -> None:
    with pytest.raises(JwksError, match=message):
        local_jwks(text)


def test_private_keys_are_refused_without_being_quoted() -> None:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    with pytest.raises(JwksError) as info:
        local_jwks(pem)
    assert "give the matching public key" in str(info.value)
    assert pem.splitlines()[1] not in str(info.value)
    private_jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private))
    with pytest.raises(JwksError, match="holds private key members"):
        local_jwks(json.dumps(private_jwk))


def test_short_rsa_keys_are_refused() -> None:
    short = rsa.generate_private_key(public_exponent=65537, key_size=1024).public_key()
    pem = short.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    with pytest.raises(JwksError, match="1024 bits; use at least 2048"):
        local_jwks(pem)


def test_key_secrets_are_recognised_for_hiding() -> None:
    """Views of the input hide a private or symmetric key pasted into `jwks.local.key`
    (found by the reliability suite: /snapshots/input and `gwctl debug yaml` showed it)."""
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    assert holds_key_secrets(pem)
    assert holds_key_secrets('{"kty": "oct", "k": "c2VjcmV0"}')
    assert holds_key_secrets('{"keys": [{"kty": "RSA", "n": "x", "e": "AQAB", "d": "y"}]}')
    assert not holds_key_secrets(public)
    assert not holds_key_secrets('{"keys": [{"kty": "RSA", "n": "x", "e": "AQAB"}]}')
    assert not holds_key_secrets("not a key")


def test_a_key_is_converted_once_whatever_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every virtual host whose options name a provider converts its key: kept per text.
    What is refused is not kept (it raises again, with its message)."""
    local_jwks.cache_clear()
    checked: list[str] = []
    real = jwks._checked_jwk

    def counted(key: object, index: int) -> dict[str, object]:
        checked.append(str(index))
        return real(key, index)

    monkeypatch.setattr(jwks, "_checked_jwk", counted)
    text = json.dumps({"keys": [SigningKey("RSA", kid="a").jwk()]})
    assert len({local_jwks(text) for _ in range(5)}) == 1
    assert checked == ["0"]
    refused = json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]})
    for _ in range(2):
        with pytest.raises(JwksError, match="only public RSA, EC and OKP keys"):
            local_jwks(refused)
    assert checked == ["0", "0", "0"]
