"""`gw up` on a hostile folder: real processes (`gw up` with its Envoy and its extauth
server, `gw echo`, `gwctl`), real HTTP through the proxy, real gRPC checks.

- A JSON file nested 2000 deep, present at start-up and written later, used to end the
  folder watcher without a log line: `gw up` said "up" while Envoy got no configuration,
  and later edits were ignored. Now it is an input error with a status like any other,
  `gwctl check` names it, and edits keep applying.
- While the control plane reads and translates a large folder (20,000 Upstreams, beside an
  alias bomb), the extauth server keeps answering: it is a process of its own, so the
  control plane's work cannot stall it (it used to share the control plane's event loop,
  which a folder read blocked for seconds). Each check must answer within `PROMPT`, which
  is hundreds of times what a check costs and a fraction of the stall it used to suffer.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from envoy.service.auth.v3 import external_auth_pb2, external_auth_pb2_grpc

from tests.reliability.hostile_manifests import bomb_in_typed_field, deep_json, many_documents
from tests.support.gwctl import gwctl
from tests.support.manifests import upstream, virtual_service
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

#: How long one extauth check may take while the control plane is busy.
PROMPT = 2.0
#: Upstreams written at once: seconds of reading and translating for the control plane.
UPSTREAMS = 20_000
PER_FILE = 5_000


@pytest.fixture
def echo(tmp_path: Path) -> Iterator[Echo]:
    server = Echo(tmp_path, "app")
    yield server
    server.stop()


def app_folder(tmp_path: Path, echo: Echo) -> Path:
    """A folder serving `app.test` from the echo upstream."""
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "app.yaml").write_text(
        upstream("app", echo.port) + "---\n" + virtual_service("app", "app.test", "app")
    )
    return folder


def served_by(gw: GwUp, host: str) -> str | int:
    response = gw.get("/", host=host)
    return response.headers.get("x-echo-name") or response.status_code


def test_a_deeply_nested_file_is_an_input_error_and_the_watcher_goes_on(
    tmp_path: Path, echo: Echo
) -> None:
    folder = app_folder(tmp_path, echo)
    (folder / "deep.json").write_text(deep_json(2000))
    gw = GwUp(folder, tmp_path / "home")  # ready: Envoy is live and the folder translated
    try:
        assert served_by(gw, "app.test") == "app"
        said = gw.process.output()  # "up" once the folder is translated, not before
        assert said.index("VirtualService default.app: Accepted") < said.index("is up: proxy")
        checked = gwctl(gw.home, "check")
        assert "Checking Manifests... 1 Errors!" in checked.stdout
        assert "Found manifest that cannot be read: deep.json: nested more than 100 levels " in (
            checked.stderr
        )
        assert "Checking Tasks... OK" in checked.stdout

        # The watcher follows: a new host goes live...
        (folder / "more.yaml").write_text(virtual_service("more", "more.test", "app"))
        wait_until(lambda: served_by(gw, "more.test") == "app", what="the new host")
        # ...a resource whose file turns deep is Rejected and keeps serving...
        deep = json.loads(deep_json(150))
        deep.update(apiVersion="gateway.vendor.io/v1", kind="VirtualService")
        deep["metadata"] = {"name": "more", "namespace": "default"}
        (folder / "more.yaml").write_text(json.dumps(deep))
        status = gw.wait_status("VirtualService default.more", "Rejected")
        assert "more.yaml, document 1: nested more than 100 levels deep" in status["reason"]
        assert served_by(gw, "more.test") == "app"
        # ...and the next edit still applies.
        (folder / "app.yaml").write_text(
            upstream("app", echo.port) + "---\n" + virtual_service("app", "app2.test", "app")
        )
        wait_until(lambda: served_by(gw, "app2.test") == "app", what="the edited host")
        tasks = gw.admin("/tasks")
        assert all(t["healthy"] and t["crashes"] == 0 for t in tasks), tasks
    finally:
        gw.stop()


def check_request() -> external_auth_pb2.CheckRequest:
    request = external_auth_pb2.CheckRequest()
    request.attributes.context_extensions["config_id"] = "gw-system.none"
    http = request.attributes.request.http
    http.method, http.path, http.host, http.scheme = "GET", "/x", "app.test", "http"
    return request


class Checker(threading.Thread):
    """Calls the extauth server's Check in a loop, timing each answer."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.stub = external_auth_pb2_grpc.AuthorizationStub(self.channel)
        self.answers: list[tuple[float, float]] = []  # (sent at, seconds)
        self.failures: list[str] = []
        self.done = threading.Event()

    def run(self) -> None:
        request = check_request()
        while not self.done.is_set():
            sent = time.monotonic()
            try:
                response = self.stub.Check(request, timeout=PROMPT)
                assert response.denied_response.status.code == 503  # no such config
                self.answers.append((sent, time.monotonic() - sent))
            except Exception as exc:  # a check that does not answer in time
                self.failures.append(f"{exc!r} after {time.monotonic() - sent:.1f}s")
            time.sleep(0.01)

    def stop(self) -> None:
        self.done.set()
        if self.is_alive():
            self.join(10)
        self.channel.close()


def test_extauth_answers_while_the_control_plane_chews_a_hostile_folder(
    tmp_path: Path, echo: Echo
) -> None:
    folder = app_folder(tmp_path, echo)
    gw = GwUp(folder, tmp_path / "home", extauth_port=free_port())
    checker = Checker(gw.extauth_port or 0)
    try:
        wait_until(lambda: _answers(checker), what="the extauth server")
        checker.start()
        wait_until(lambda: len(checker.answers) >= 5, what="checks before the folder changes")
        count = gw.admin("/proxies")["translation"]["count"]
        written = time.monotonic()
        (folder / "bomb.yaml").write_text(bomb_in_typed_field(8))
        for start in range(0, UPSTREAMS, PER_FILE):
            (folder / f"bulk-{start}.yaml").write_text(
                many_documents(start + PER_FILE, start, "bulk-")
            )

        def translated() -> bool:
            if gw.admin("/proxies")["translation"]["count"] == count:
                return False
            statuses = gw.admin("/statuses")["resources"]
            return sum(r["name"].startswith("bulk-") for r in statuses) == UPSTREAMS

        wait_until(translated, timeout=300, interval=0.5, what="the large folder translated")
        finished = time.monotonic()
        checker.stop()
        during = [seconds for sent, seconds in checker.answers if written <= sent <= finished]
        assert checker.failures == [], checker.failures[:5]
        assert len(during) >= 10, (len(during), finished - written)
        assert max(during) < PROMPT
        status = gw.status("VirtualService default.web")
        assert status is not None and "maxAliasExpansions" in status["reason"]
        assert served_by(gw, "app.test") == "app"
    finally:
        checker.stop()
        gw.stop()


def _answers(checker: Checker) -> bool:
    checker.stub.Check(check_request(), timeout=PROMPT)
    return True


def test_a_killed_extauth_child_is_started_again(tmp_path: Path) -> None:
    """Under `gw up` the extauth server is a child process: one that dies (killed, or a bug
    that ends it) is started again, and answers again."""
    folder = tmp_path / "config"
    folder.mkdir()
    gw = GwUp(folder, tmp_path / "home", extauth_port=free_port())
    checker = Checker(gw.extauth_port or 0)
    try:
        (first,) = [c for c in gw.admin("/components") if c["name"] == "extauth"]
        assert first["running"] and first["restarts"] == 0
        os.kill(first["pid"], signal.SIGKILL)

        def restarted() -> dict[str, Any] | None:
            (now,) = [c for c in gw.admin("/components") if c["name"] == "extauth"]
            return now if now["running"] and now["pid"] != first["pid"] else None

        again = wait_until(restarted, what="a new extauth process")
        assert again["restarts"] == 1
        wait_until(lambda: _answers(checker), what="the new extauth process to answer")
        assert "extauth exited with status -9" in (gw.state_dir / "logs" / "gw.log").read_text()
    finally:
        checker.stop()
        gw.stop()
