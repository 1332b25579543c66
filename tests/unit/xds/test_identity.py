"""Who may connect to the ADS server as which role, and subscribe to what (gw.xds.identity,
gw.xds.tls): the real server over real gRPC, with mutual TLS certificates from `gw certgen`'s
own code (gw.certgen), and in plaintext on loopback as `gw up` serves it."""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from envoy.config.cluster.v3 import cluster_pb2
from envoy.service.discovery.v3 import discovery_pb2
from google.protobuf import struct_pb2

from gw import certgen
from gw.xds.cache import SnapshotCache
from gw.xds.identity import NodePolicy, certificate_roles
from gw.xds.server import AdsServer, start_server
from gw.xds.tls import CertificateFolder, ServerCertificates, XdsTlsError, secure_channel
from tests.support.ads import exchange, request
from tests.support.ports import free_port

CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
SDS = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"
STRUCT = "type.googleapis.com/google.protobuf.Struct"
PROXY = "gw-system~gateway-proxy"
EXTAUTH = "gw-system~extauth"
RATELIMIT = "gw-system~ratelimit"


async def first_answer(
    channel: grpc.aio.Channel, *requests: discovery_pb2.DiscoveryRequest
) -> discovery_pb2.DiscoveryResponse:
    """The first response on a stream of `requests` (raises the stream's error)."""
    responses, error = await exchange(channel, requests)
    if error is not None:
        raise error
    return responses[0]


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("xds-certs")
    certgen.issue_folder(folder, "gw-system", ("gateway-proxy",))
    return folder


@pytest.fixture
def cache() -> SnapshotCache:
    cache = SnapshotCache()
    cache.set(PROXY, {CDS: {"a": cluster_pb2.Cluster(name="a")}, SDS: {}})
    cache.set(RATELIMIT, {STRUCT: {"rl": struct_pb2.Struct()}})
    return cache


@pytest.fixture
async def tls_server(
    certs: Path, cache: SnapshotCache, tmp_path: Path
) -> AsyncIterator[tuple[str, AdsServer, Path]]:
    """The ADS server over mutual TLS, serving from a copy of the control plane's folder
    (which a test may rotate)."""
    served = tmp_path / "served"
    authority = certgen.read_authority(certs)
    assert authority is not None
    (party,) = [
        p for p in certgen.issue_parties(authority, "gw-system") if p.name == "controlplane"
    ]
    certgen.write_folder(served, authority, [party])
    ads = AdsServer(cache, NodePolicy("gw-system"))
    address = f"127.0.0.1:{free_port()}"
    server = await start_server(ads, address, tls=ServerCertificates(served / "controlplane"))
    yield address, ads, served / "controlplane"
    await server.stop(0)


async def test_a_proxy_certificate_gets_the_proxy_role_and_nothing_else(
    tls_server: tuple[str, AdsServer, Path], certs: Path
) -> None:
    address, ads, _ = tls_server
    async with secure_channel(address, certs / "gateway-proxy", PROXY) as channel:
        response = await first_answer(channel, request(PROXY, CDS))
    assert response.type_url == CDS and len(response.resources) == 1
    async with secure_channel(address, certs / "gateway-proxy", PROXY) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await first_answer(channel, request(EXTAUTH, STRUCT))
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert refused.value.details() == (
        "node announces role 'gw-system~extauth' but its certificate is for "
        "'gw-system~gateway-proxy'"
    )
    assert ads.refused_count == 1


async def test_the_rate_limit_server_may_not_subscribe_to_secrets(
    tls_server: tuple[str, AdsServer, Path], certs: Path
) -> None:
    address, _, _ = tls_server
    async with secure_channel(address, certs / "ratelimit", RATELIMIT) as channel:
        response = await first_answer(channel, request(RATELIMIT, STRUCT))
        assert response.type_url == STRUCT
    for forbidden in (SDS, CDS):
        async with secure_channel(address, certs / "ratelimit", RATELIMIT) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await first_answer(channel, request(RATELIMIT, forbidden, ("*",)))
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert refused.value.details() == (
            f"role 'gw-system~ratelimit' may not subscribe to {forbidden.split('/')[1]}"
        )


async def test_a_proxy_may_not_subscribe_to_the_components_configuration(
    tls_server: tuple[str, AdsServer, Path], certs: Path
) -> None:
    address, _, _ = tls_server
    async with secure_channel(address, certs / "gateway-proxy", PROXY) as channel:
        answered, refused = await exchange(
            channel, [request(PROXY, CDS), request(None, STRUCT)], lambda _: False
        )
    assert [r.type_url for r in answered] in ([], [CDS])  # maybe sent before the refusal
    assert refused is not None and refused.code() == grpc.StatusCode.PERMISSION_DENIED
    assert refused.details() == (
        "role 'gw-system~gateway-proxy' may not subscribe to google.protobuf.Struct"
    )


async def test_a_certificate_naming_no_role_is_unauthenticated(
    tls_server: tuple[str, AdsServer, Path], certs: Path, tmp_path: Path
) -> None:
    address, _, _ = tls_server
    authority = certgen.read_authority(certs)
    assert authority is not None
    nobody = certgen.issue(authority.ca, "nobody", server=False)
    folder = tmp_path / "nobody"
    folder.mkdir()
    (folder / "ca.crt").write_text(authority.ca.cert_pem)
    (folder / "tls.crt").write_text(nobody.cert_pem)
    (folder / "tls.key").write_text(nobody.key_pem)
    async with secure_channel(address, folder, PROXY) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await first_answer(channel, request(PROXY, CDS))
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "names no gw role" in (refused.value.details() or "")


async def test_a_certificate_of_another_ca_or_none_fails_the_handshake(
    tls_server: tuple[str, AdsServer, Path], certs: Path, tmp_path: Path
) -> None:
    address, ads, _ = tls_server
    certgen.issue_folder(tmp_path / "other", "gw-system")
    # Trusts the real server, presents a certificate of another CA.
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "ca.crt").write_bytes((certs / "gateway-proxy" / "ca.crt").read_bytes())
    for name in ("tls.crt", "tls.key"):
        (stranger / name).write_bytes((tmp_path / "other" / "gateway-proxy" / name).read_bytes())
    async with secure_channel(address, stranger, PROXY) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await first_answer(channel, request(PROXY, CDS))
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    with pytest.raises(ConnectionRefusedError):
        handshake(address, certs / "gateway-proxy", with_certificate=False)
    async with grpc.aio.insecure_channel(address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as plaintext:
            await first_answer(channel, request(PROXY, CDS))
    assert plaintext.value.code() == grpc.StatusCode.UNAVAILABLE
    assert ads.connections == {}


def handshake(address: str, client: Path, *, with_certificate: bool = True) -> x509.Certificate:
    """A TLS handshake with the server, as a client of `client`'s folder; the server's
    certificate. ConnectionRefusedError when the server ends the connection instead of
    speaking HTTP/2 (with TLS 1.3 it refuses a missing certificate after the handshake)."""
    context = ssl.create_default_context(cafile=str(client / "ca.crt"))
    context.check_hostname = False
    context.set_alpn_protocols(["h2"])
    if with_certificate:
        context.load_cert_chain(client / "tls.crt", client / "tls.key")
    host, _, port = address.rpartition(":")
    with (
        socket.create_connection((host, int(port)), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="gw.gw-system.svc") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
        tls.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        try:
            spoken = tls.read(1)
        except (ssl.SSLError, ConnectionResetError):
            spoken = b""
    if not spoken:
        raise ConnectionRefusedError("the server ended the connection")
    assert der is not None
    return x509.load_der_x509_certificate(der)


async def test_rotated_server_certificates_serve_from_the_next_handshake(
    tls_server: tuple[str, AdsServer, Path], certs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    address, _, served = tls_server
    proxy = certs / "gateway-proxy"
    before = await asyncio.to_thread(handshake, address, proxy)
    authority = certgen.read_authority(certs)
    assert authority is not None
    parties = certgen.issue_parties(authority, "gw-system")
    certgen.write_folder(served.parent, authority, [p for p in parties if p.name == "controlplane"])
    after = await asyncio.to_thread(handshake, address, proxy)
    assert after.serial_number != before.serial_number
    assert after.serial_number == CertificateFolder(served).certificate().serial_number
    async with secure_channel(address, proxy, PROXY) as channel:
        assert (await first_answer(channel, request(PROXY, CDS))).resources
    # A half-written folder (a key that is not the certificate's) is not taken.
    (served / "tls.key").unlink()
    (served / "tls.key").write_text(parties[1].cert.key_pem)
    with caplog.at_level(logging.WARNING, "gw.xds.tls"):
        still = await asyncio.to_thread(handshake, address, proxy)
    assert still.serial_number == after.serial_number
    assert f"{served / 'tls.key'} is not the private key of {served / 'tls.crt'}" in caplog.text


# --- plaintext on loopback (`gw up`) -------------------------------------------------------


@pytest.fixture
async def plaintext() -> AsyncIterator[tuple[str, SnapshotCache]]:
    cache = SnapshotCache()
    address = f"127.0.0.1:{free_port()}"
    server = await start_server(AdsServer(cache, NodePolicy("gw-system")), address)
    yield address, cache
    await server.stop(0)


async def test_plaintext_refuses_unknown_roles_naming_the_known_ones(
    plaintext: tuple[str, SnapshotCache],
) -> None:
    address, cache = plaintext
    cache.set(PROXY, {CDS: {"a": cluster_pb2.Cluster(name="a")}})
    async with grpc.aio.insecure_channel(address) as channel:
        assert (await first_answer(channel, request(PROXY, CDS))).resources
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await first_answer(channel, request("gw-system~gateway-prxy", CDS))
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert refused.value.details() == (
        "role 'gw-system~gateway-prxy' is not a proxy or component this control plane serves "
        "(known: gw-system~extauth, gw-system~gateway-proxy, gw-system~ratelimit)"
    )


async def test_plaintext_waits_for_the_first_translation_to_know_the_proxies(
    plaintext: tuple[str, SnapshotCache],
) -> None:
    """A proxy that connects before the first translation names it is not refused."""
    address, cache = plaintext
    async with grpc.aio.insecure_channel(address) as channel:
        answer = asyncio.create_task(first_answer(channel, request("gw-system~internal", CDS)))
        await asyncio.sleep(0.2)
        assert not answer.done()
        cache.set("gw-system~internal", {CDS: {"i": cluster_pb2.Cluster(name="i")}})
        assert len((await answer).resources) == 1


async def test_plaintext_is_refused_off_loopback_unless_insecure(tmp_path: Path) -> None:
    ads = AdsServer(SnapshotCache())
    with pytest.raises(OSError, match=r"refusing to serve xDS in plaintext on 0\.0\.0\.0:\d+"):
        await start_server(ads, f"0.0.0.0:{free_port()}")
    server = await start_server(ads, f"0.0.0.0:{free_port()}", insecure=True)
    await server.stop(0)
    server = await start_server(ads, f"127.0.0.1:{free_port()}", f"unix:{tmp_path / 'xds.sock'}")
    await server.stop(0)


# --- the pieces --------------------------------------------------------------------------------


def test_certificate_roles_read_the_uri_sans_of_a_verified_peer() -> None:
    assert certificate_roles({}) is None
    context = {
        "transport_security_type": [b"ssl"],
        "peer_uri": [b"urn:gw:role:gw-system~extauth", b"spiffe://other/x"],
    }
    assert certificate_roles(context) == ("gw-system~extauth",)
    assert certificate_roles({"transport_security_type": [b"ssl"]}) == ()


def test_a_folder_that_does_not_fit_together_names_the_problem(tmp_path: Path) -> None:
    certgen.issue_folder(tmp_path, "gw-system")
    with pytest.raises(XdsTlsError, match=r"cannot read the xDS certificates in .*nowhere"):
        CertificateFolder(tmp_path / "nowhere").read()
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "ca.crt").write_bytes((tmp_path / "extauth" / "ca.crt").read_bytes())
    (mixed / "tls.crt").write_bytes((tmp_path / "extauth" / "tls.crt").read_bytes())
    (mixed / "tls.key").write_bytes((tmp_path / "ratelimit" / "tls.key").read_bytes())
    with pytest.raises(XdsTlsError, match="tls.key is not the private key of .*tls.crt"):
        CertificateFolder(mixed).read()


def test_certgen_rotation_keeps_the_ca_and_rotate_ca_keeps_the_old_one_trusted(
    tmp_path: Path,
) -> None:
    certgen.issue_folder(tmp_path, "gw-system")
    first = CertificateFolder(tmp_path / "gateway-proxy")
    ca_before = (tmp_path / "ca" / "ca.crt").read_text()
    serial = first.certificate().serial_number
    certgen.issue_folder(tmp_path, "gw-system")
    assert (tmp_path / "ca" / "ca.crt").read_text() == ca_before
    assert first.certificate().serial_number != serial
    certgen.issue_folder(tmp_path, "gw-system", rotate_ca=True)
    trusted = (tmp_path / "gateway-proxy" / "ca.crt").read_text()
    assert trusted.endswith(ca_before) and trusted != ca_before
    assert (tmp_path / "ca" / "previous-ca.crt").read_text() == ca_before
    with pytest.raises(ValueError, match="proxy names extauth are taken"):
        certgen.parties("gw-system", ["extauth"])


def test_issued_certificates_name_roles_and_the_service() -> None:
    authority = certgen.renew_authority(None, "team")
    issued = {p.name: p for p in certgen.issue_parties(authority, "team", ("edge",))}
    assert list(issued) == ["controlplane", "extauth", "ratelimit", "edge"]

    def sans(name: str) -> list[str]:
        cert = x509.load_pem_x509_certificate(issued[name].cert.cert_pem.encode())
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        return [
            *names.get_values_for_type(x509.UniformResourceIdentifier),
            *names.get_values_for_type(x509.DNSName),
        ]

    assert sans("edge") == ["urn:gw:role:team~edge"]
    assert sans("extauth") == ["urn:gw:role:team~extauth"]
    assert sans("controlplane") == [
        "gw",
        "gw.team",
        "gw.team.svc",
        "gw.team.svc.cluster.local",
    ]


async def test_the_component_client_connects_over_mutual_tls_and_reports_a_refusal(
    tls_server: tuple[str, AdsServer, Path], certs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The extauth and rate-limit servers' ADS client: its own certificate gets its
    configuration; another role's certificate is refused, said in its state and log."""
    from gw.xds.client import AdsClient, component_node

    address, _, _ = tls_server
    received: list[int] = []
    good = AdsClient(
        address,
        component_node("ratelimit", RATELIMIT),
        STRUCT,
        lambda resources: received.append(len(resources)),
        certs=certs / "ratelimit",
    )
    wrong = AdsClient(
        address,
        component_node("extauth", EXTAUTH),
        STRUCT,
        lambda _: None,
        certs=certs / "ratelimit",
    )
    tasks = [asyncio.create_task(good.run()), asyncio.create_task(wrong.run())]
    try:
        with caplog.at_level(logging.WARNING, "gw.xds.client"):
            await asyncio.wait_for(good.state.ready.wait(), 10)
            while wrong.state.last_error is None:
                await asyncio.sleep(0.05)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert received == [1]
    assert wrong.state.last_error == (
        "PERMISSION_DENIED: node announces role 'gw-system~extauth' but its certificate is for "
        "'gw-system~ratelimit'"
    )
    assert f"xds: {address} refused this node: node announces role" in caplog.text
