"""Session passes in the translator, for what goldens cannot show: the key is an input
(never module state), each AuthConfig version gets its own, and no dump shows one."""

from __future__ import annotations

import json
from pathlib import Path

from gw.discovery import ServiceDiscovery
from gw.store.directory import DirectoryStore
from gw.translator.dump import hide_key_material, message_to_data, proxy_to_data, redact
from gw.translator.envoy import names
from gw.translator.options import Options, new_session_pass_key
from gw.translator.translation import translate

CASE = Path(__file__).parents[2] / "golden" / "cases" / "extauth-pass-oidc.in.yaml"


def _translate(text: str, key: bytes, tmp: Path) -> tuple[dict[str, str], str]:
    folder = tmp / key.hex()[:8] / str(hash(text))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "case.yaml").write_text(text)
    snapshot = ServiceDiscovery(Options().namespace)(DirectoryStore(folder).scan())
    result = translate(snapshot, Options(session_pass_key=key))
    configs = result.extauth.resources[names.AUTH_CONFIG]
    keys = {
        ident: struct["session_pass"]["signing_key"]
        for ident, struct in configs.items()
        if "session_pass" in struct
    }
    listeners = "".join(
        str(message_to_data(m)) for m in result.xds.resources[names.LISTENER].values()
    )
    listeners += json.dumps(proxy_to_data(result.proxy))
    return keys, listeners


def test_keys_follow_the_control_planes_key_and_the_auth_configs_version(tmp_path: Path) -> None:
    text = CASE.read_text()
    first = new_session_pass_key()
    keys, shown = _translate(text, first, tmp_path)
    assert set(keys) == {"gw-system.oidc-redis"}
    assert _translate(text, first, tmp_path)[0] == keys  # a pure function of its inputs
    assert _translate(text, new_session_pass_key(), tmp_path)[0] != keys  # a restart: new keys
    edited = text.replace("logoutPath: /logout", "logoutPath: /signout")
    assert _translate(edited, first, tmp_path)[0] != keys  # an edited AuthConfig: old passes fail
    assert keys["gw-system.oidc-redis"] not in shown
    assert '"kty":"oct"' not in shown and "<redacted>" in shown


def test_redaction_hides_symmetric_jwks_but_not_public_ones() -> None:
    secret = {"local_jwks": {"inline_string": '{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}'}}
    public = {"local_jwks": {"inline_string": '{"keys":[{"kty":"RSA","n":"AQAB"}]}'}}
    assert redact({"provider": secret}) == {"provider": {"local_jwks": "<redacted>"}}
    assert redact({"provider": public}) == {"provider": public}
    assert redact({"session_pass": {"signing_key": "abc"}}) == {
        "session_pass": {"signing_key": "<redacted>"}
    }


def test_gwctl_proxy_dump_hides_pass_keys_in_envoys_config_dump() -> None:
    """`gwctl proxy dump` prints Envoy's own `/config_dump`, where the key would show."""
    dump = {
        "configs": [
            {
                "providers": {
                    "ns.a": {
                        "local_jwks": {"inline_string": '{"keys":[{"kty":"oct","k":"s3"}]}'},
                        "from_cookies": ["gw-pass-1"],
                    }
                }
            }
        ]
    }
    hidden = hide_key_material(dump)
    assert hidden["configs"][0]["providers"]["ns.a"] == {
        "local_jwks": "<redacted>",
        "from_cookies": ["gw-pass-1"],
    }
    assert "s3" not in str(hidden)
