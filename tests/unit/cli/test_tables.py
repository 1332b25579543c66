"""The established tool's ASCII tables: `+---+` borders, centred upper-case headers,
left-aligned cells, multi-line cells spread over extra rows."""

from __future__ import annotations

from gw.cli.tables import render_table
from tests.support.gwctl import parse_table


def test_table_shape() -> None:
    table = render_table(["Upstream", "Type"], [["a", "Static"], ["long-name", "x\ny"]])
    assert table.splitlines() == [
        "+-----------+--------+",
        "|  UPSTREAM |  TYPE  |",
        "+-----------+--------+",
        "| a         | Static |",
        "+-----------+--------+",
        "| long-name | x      |",
        "|           | y      |",
        "+-----------+--------+",
    ]


def test_table_without_rows_has_only_headers() -> None:
    assert render_table(["Secret", "Type"], []).splitlines() == [
        "+--------+------+",
        "| SECRET | TYPE |",
        "+--------+------+",
    ]


def test_rendered_tables_read_back() -> None:
    rows = [["a | b", "one\ntwo\n"], ["c", ""]]
    table = render_table(["Left", "Right"], rows)
    assert parse_table(table) == [
        {"LEFT": "a | b", "RIGHT": "one\ntwo"},
        {"LEFT": "c", "RIGHT": ""},
    ]
