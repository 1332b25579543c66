"""The configs the benchmark generates for its peers are valid for the real programs:
`nginx -t`, `haproxy -c`, `apache2 -t` (with mod_auth_openidc loaded and configured for
Redis sessions), and Envoy's `--mode validate` for the hand-written baselines.

nginx, HAProxy and Apache are benchmark peers, not CI dependencies (`scripts/bench-deps`
installs them for `make bench`): where one is not installed, its test is skipped and says
so. Envoy comes with the wheel, so its configs are always checked. Nothing here starts a
server or puts load on the machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import jwt, peers

from tests.support.tokens import SigningKey

UPSTREAM, PROXY, ADMIN = 20001, 20002, 20003


def _require(*programs: str) -> None:
    absent = peers.missing(*programs)
    if absent:
        pytest.skip(
            f"{', '.join(absent)} not installed: a benchmark peer, not a CI dependency "
            "(scripts/bench-deps installs it for `make bench`)"
        )


def _valid(kind: str, config: str, workdir: Path) -> str:
    done = peers.validate(kind, config, workdir)
    assert done.returncode == 0, f"{kind} refused the config:\n{done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def test_nginx_upstream_and_proxy_configs_pass_nginx_t(tmp_path: Path) -> None:
    _require("nginx")
    upstream = peers.nginx_upstream_config(UPSTREAM, tmp_path)
    assert 'return 200 "hello world\\n"' in upstream
    assert "test is successful" in _valid("nginx", upstream, tmp_path / "upstream")
    proxy = peers.nginx_proxy_config(PROXY, UPSTREAM, tmp_path)
    assert f"server 127.0.0.1:{UPSTREAM};" in proxy and "keepalive 64;" in proxy
    assert "test is successful" in _valid("nginx", proxy, tmp_path / "proxy")


def test_nginx_refuses_a_broken_config_so_the_check_can_fail(tmp_path: Path) -> None:
    _require("nginx")
    broken = peers.nginx_proxy_config(PROXY, UPSTREAM, tmp_path).replace("keepalive 64;", "x;")
    assert peers.validate("nginx", broken, tmp_path).returncode != 0


def test_haproxy_config_passes_haproxy_c(tmp_path: Path) -> None:
    _require("haproxy")
    config = peers.haproxy_config(PROXY, UPSTREAM)
    assert "nbthread 1" in config and f"server hello 127.0.0.1:{UPSTREAM}" in config
    assert "valid" in _valid("haproxy", config, tmp_path)


def test_apache_plain_and_oidc_configs_pass_apache2_t(tmp_path: Path) -> None:
    _require("apache2", "mod_auth_openidc")
    plain = peers.apache_config(PROXY, UPSTREAM, tmp_path, None)
    assert "Syntax OK" in _valid("apache", plain, tmp_path / "plain")
    oidc = peers.Oidc("http://127.0.0.1:1", "bench", "bench", "127.0.0.1:2", f"a.bench:{PROXY}")
    secure = peers.apache_config(PROXY, UPSTREAM, tmp_path, oidc)
    assert "OIDCCacheType redis" in secure and "OIDCRedisCacheServer 127.0.0.1:2" in secure
    assert "Require valid-user" in secure
    assert "Syntax OK" in _valid("apache", secure, tmp_path / "oidc")


def test_handwritten_envoy_configs_pass_envoy_validate(tmp_path: Path) -> None:
    _valid("envoy", peers.envoy_config(PROXY, ADMIN, UPSTREAM), tmp_path / "plain")
    key = SigningKey("RSA")
    jwks = json.dumps({"keys": [key.jwk()]})
    ports = {"admin": ADMIN, "secure": PROXY, "plain": PROXY + 10}
    handwritten = jwt.handwritten_config(**ports, upstream=UPSTREAM, jwks=jwks)
    _valid("envoy", handwritten, tmp_path / "jwt")
    upstream = jwt.upstream_config(admin=ADMIN, port=UPSTREAM)
    _valid("envoy", upstream, tmp_path / "upstream")


def test_nginx_basic_auth_config_passes_nginx_t(tmp_path: Path) -> None:
    """bench/credentials.py's nginx side reads the htpasswd file gw's AuthConfig is made of."""
    _require("nginx")
    from bench import credentials

    file = tmp_path / "htpasswd"
    file.write_text("user0:$apr1$TYiryv0/$8BvzLUO9IfGPGGsPnAgSu1\n")
    config = credentials.nginx_basic_config(PROXY, UPSTREAM, tmp_path, file)
    assert 'auth_basic "bench";' in config and f"auth_basic_user_file {file};" in config
    assert "test is successful" in _valid("nginx", config, tmp_path / "basic")
    gw = credentials.gw_config(file, ["key-0"], UPSTREAM)
    assert 'user0: {salt: "TYiryv0/", hashedPassword: "8BvzLUO9IfGPGGsPnAgSu1"}' in gw


def test_rotating_header_script_sends_each_value_in_turn(tmp_path: Path) -> None:
    script = peers.rotating_header(tmp_path / "s.lua", "Cookie", ['a="1"', "b=2"], "/bench")
    text = script.read_text()
    assert '"a=\\"1\\"",\n"b=2"' in text and 'wrk.headers["Cookie"] = values[i]' in text
    assert 'wrk.format("GET", "/bench")' in text
