"""`bufferPerRoute` (virtual host, route, weighted destination): the largest request body
Envoy buffers before it answers 413, or the buffer switched off."""

from __future__ import annotations

from gw.api.meta import Model


class Buffer(Model):
    max_request_bytes: int | None = None


class BufferPerRoute(Model):
    """Exactly one of `disabled: true` and `buffer`."""

    disabled: bool | None = None
    buffer: Buffer | None = None
