"""Translation traces: spans as offsets from the trace start, rendered for the debug server."""

from __future__ import annotations

from gw.tracing import Trace


def test_spans_are_offsets_and_render_in_milliseconds() -> None:
    trace = Trace(id=7, started_at=1000.0, origin=10.0)
    trace.add("store", 10.0, 10.002)
    trace.add("translate", 10.002, 10.0125)
    with trace.span("publish"):
        pass
    data = trace.to_data()
    assert data["id"] == 7 and "error" not in data
    assert data["spans"][:2] == [
        {"name": "store", "startMs": 0.0, "durationMs": 2.0},
        {"name": "translate", "startMs": 2.0, "durationMs": 10.5},
    ]
    assert data["spans"][2]["name"] == "publish"
    assert data["durationMs"] >= 12.5
    trace.error = "boom"
    assert trace.to_data()["error"] == "boom"
