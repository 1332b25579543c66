"""A WebSocket echo server for end-to-end tests: a test peer outside the product, run as
`python -m tests.support.websocket_echo PORT`. Every text message comes back prefixed with
`echo: `; a plain GET answers 200 `plain` (a readiness check).

`exchange()` is the client side: it opens a WebSocket through a proxy with `wsproto`
(the protocol library uvicorn uses), sends one text message and returns the reply."""

from __future__ import annotations

import socket
import sys

import wsproto
import wsproto.events as ws_events


def _app() -> object:
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket

    async def plain(request: object) -> PlainTextResponse:
        return PlainTextResponse("plain")

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        async for message in websocket.iter_text():
            await websocket.send_text(f"echo: {message}")

    return Starlette(routes=[Route("/{path:path}", plain), WebSocketRoute("/ws/{path:path}", echo)])


class Refused(Exception):
    """The proxy answered the upgrade request with an HTTP response instead."""

    def __init__(self, status: int) -> None:
        super().__init__(f"upgrade refused with {status}")
        self.status = status


def exchange(port: int, host: str, path: str, message: str, timeout: float = 5.0) -> str:
    """Send `message` over a WebSocket to `ws://127.0.0.1:port{path}` (Host `host`)."""
    connection = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(connection.send(ws_events.Request(host=host, target=path)))
        while True:
            data = sock.recv(65536)
            connection.receive_data(data or None)
            for event in connection.events():
                if isinstance(event, ws_events.AcceptConnection):
                    sock.sendall(connection.send(ws_events.TextMessage(data=message)))
                elif isinstance(event, ws_events.RejectConnection):
                    raise Refused(event.status_code)
                elif isinstance(event, ws_events.TextMessage):
                    sock.sendall(connection.send(ws_events.CloseConnection(code=1000)))
                    return str(event.data)
            if not data:
                raise ConnectionError("the connection closed before an answer")


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(_app(), host="127.0.0.1", port=int(sys.argv[1]), ws="wsproto", log_level="warning")  # type: ignore[arg-type]
