"""The `gw-oidc-redis-pass` scenario of `bench.oidc`: the same sessions with session passes
on (Settings `extauth.sessionPass`, a gw extension, off by default).

Like a browser, each session keeps the pass its first answer sets: before each run (the
warm-up and every round) one request per session, with httpx, goes to the extauth server
and brings a fresh pass back; wrk then sends every session's cookie with its pass in turn.
The TTL, `PASS_TTL`, is longer than a round (collecting the passes and the run), so no pass
expires during a run; what a run measures is Envoy verifying passes by itself. The other
gw scenarios run with passes off (the Settings are written again before each run), so they
measure exactly what they did before.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.support.extauth_manifests import extauth_settings
from tests.support.oidc_agent import Agent

#: Longer than collecting the passes plus one run (`--duration`, 5 s by default).
PASS_TTL = "60s"
COLLECTING_AT_ONCE = 8


def settings(passes: bool) -> str:
    """The bench's Settings: gw's extauth server, with session passes or without."""
    return extauth_settings("5s") + (f"    sessionPass: {{ttl: {PASS_TTL}}}\n" if passes else "")


def hands_passes(url: str, host: str, session: str) -> bool:
    """The extauth server has the AuthConfig with passes: an allow sets one."""
    agent = Agent(url, host)
    agent.cookies = dict(p.split("=", 1) for p in session.split("; ") if p)
    agent.get("/bench")
    return any(n.startswith("gw-pass-") for n in agent.cookies)


def with_passes(url: str, host: str, sessions: list[str]) -> list[str]:
    """Each session's Cookie header with the pass the extauth server hands it now."""
    with ThreadPoolExecutor(COLLECTING_AT_ONCE) as pool:
        return list(pool.map(lambda cookie: _with_pass(url, host, cookie), sessions))


def _with_pass(url: str, host: str, session: str) -> str:
    agent = Agent(url, host)
    agent.cookies = dict(p.split("=", 1) for p in session.split("; ") if p)
    answer = agent.get("/bench")
    if answer.status_code != 200 or not any(n.startswith("gw-pass-") for n in agent.cookies):
        raise RuntimeError(f"no session pass for {session[:40]}...: {answer.status_code}")
    return "; ".join(f"{k}={v}" for k, v in agent.cookies.items())


def pass_filter_on(config_dump: str) -> bool:
    return "gw.session_pass" in config_dump


def checks_asked(stats: str) -> int:
    """Requests Envoy sent gw's extauth server (both doors), from its `/stats` text."""
    total = 0
    for line in stats.splitlines():
        name, _, value = line.partition(": ")
        if name in (
            "cluster.extauth-http_gw-system.upstream_rq_total",
            "cluster.extauth_gw-system.upstream_rq_total",
        ):
            total += int(value)
    return total
