"""The sealed login state: only the browser that started a login can finish it."""

from __future__ import annotations

import time

from gw.extauth.state import LoginState, StateSealer, UsedStates, state_cookie_name


def test_round_trip_and_pkce() -> None:
    sealer = StateSealer("secret", "ns.app")
    login = LoginState.start("https://app.example.com/x?y=1")
    opened = sealer.open(sealer.seal(login), login.state)
    assert opened == login
    assert len(login.code_challenge) == 43 and "=" not in login.code_challenge
    assert state_cookie_name(login.state).startswith("gw-oidc-")


def test_refuses_tampered_foreign_or_expired() -> None:
    sealer = StateSealer("secret", "ns.app")
    login = LoginState.start("/")
    sealed = sealer.seal(login)
    assert sealer.open(sealed, "another-state") is None
    flipped = sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1]
    assert sealer.open(flipped, login.state) is None
    assert sealer.open("garbage", login.state) is None
    assert StateSealer("secret", "ns.other").open(sealed, login.state) is None
    assert StateSealer("rotated", "ns.app").open(sealed, login.state) is None
    old = LoginState("s", "n", "v", "/", expires_at=time.time() - 1)
    assert sealer.open(sealer.seal(old), "s") is None


def test_replicas_share_the_key_but_public_clients_do_not_need_one() -> None:
    login = LoginState.start("/")
    assert StateSealer("secret", "ns.app").open(
        StateSealer("secret", "ns.app").seal(login), login.state
    )
    public = StateSealer("", "ns.app")
    assert public.open(public.seal(login), login.state) == login


def test_a_state_is_claimed_once() -> None:
    used = UsedStates()
    login = LoginState.start("/")
    assert used.claim(login)
    assert not used.claim(login)
    assert used.claim(LoginState.start("/"))
