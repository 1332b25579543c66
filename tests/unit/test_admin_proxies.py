"""The Proxy resources the admin API serves (`gwctl get proxy`): a NACK from one of the
proxy's Envoys rejects that Proxy, and only that one."""

from __future__ import annotations

from gw.admin.server import with_nacks
from gw.api.status import State, Status
from gw.translator import ir
from gw.translator.dump import proxy_resource


def connection(role: str, nack: dict[str, str] | None) -> dict[str, object]:
    state: dict[str, object] = {"sent": "v2", "acked": "v1"}
    if nack:
        state["nack"] = nack
    return {"node": "edge-1", "role": role, "types": {"envoy.config.listener.v3.Listener": state}}


def test_a_nack_rejects_the_proxy_of_that_role_only() -> None:
    edge = ir.Proxy(name="edge", namespace="gw-system")
    default = ir.Proxy(name="gateway-proxy", namespace="gw-system")
    accepted = Status(state=State.ACCEPTED)
    connections = [
        connection("gw-system~edge", {"version": "v2", "message": "bad listener"}),
        connection("gw-system~gateway-proxy", None),
    ]
    rejected = with_nacks(accepted, edge, connections)
    assert rejected is not None and rejected.state is State.REJECTED
    assert rejected.messages == ["Envoy edge-1 rejected Listener version v2: bad listener"]
    assert with_nacks(accepted, default, connections) is accepted
    data = proxy_resource(edge, rejected)
    assert data["status"]["statuses"]["gw-system"]["state"] == "Rejected"
    assert data["spec"] == {"listeners": []}
