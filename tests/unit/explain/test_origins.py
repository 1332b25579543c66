"""A field's line in a manifest, for `gwctl explain`'s "file and line"."""

from __future__ import annotations

from gw.explain.origins import field_line

TEXT = """# a comment
apiVersion: v1
kind: A
---
---
kind: VirtualService
spec:
  virtualHost:
    routes:
      - matchers: [{prefix: /a}]
      - matchers:
          - prefix: /b
          - exact: /c
"""


def test_lines_of_fields_by_document() -> None:
    assert field_line(TEXT, 1, "") == 2
    assert field_line(TEXT, 3, "spec.virtualHost.routes[0].matchers[0]") == 10
    assert field_line(TEXT, 3, "spec.virtualHost.routes[1].matchers[1]") == 13
    assert field_line(TEXT, 3, "spec.virtualHost.routes[1]") == 11
    # A field the file no longer has: its deepest part still found.
    assert field_line(TEXT, 3, "spec.virtualHost.routes[7].matchers[0]") == 10
    assert field_line(TEXT, 2, "spec") is not None  # the empty document is counted
    assert field_line(TEXT, 9, "spec") is None
    assert field_line("kind: [oops", 1, "kind") is None
