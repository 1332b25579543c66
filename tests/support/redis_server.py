"""A real `redis-server` for session-store tests: a free loopback port, no persistence,
stopped (and restartable on the same port, to test an outage) by the test."""

from __future__ import annotations

import shutil
from pathlib import Path

import redis

from tests.support.ports import free_port
from tests.support.processes import Process
from tests.support.wait import wait_until


class RedisServer:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.process: Process | None = None
        self.start()

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed: run scripts/system-deps")
        self.process = Process(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
            ],  # fmt: skip
            {},
            self.workdir / f"redis-{self.port}.log",
        )
        wait_until(lambda: self.client().ping(), what=f"redis on {self.port}")

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True)

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None
