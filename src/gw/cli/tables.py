"""ASCII tables in the established CLI's shape: `+---+` borders, upper-case headers,
multi-line cells spread over extra rows."""

from __future__ import annotations

from collections.abc import Sequence


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    cells = [[c.split("\n") for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, lines in enumerate(row):
            widths[i] = max(widths[i], *(len(line) for line in lines))
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [
        border,
        _line([h.upper().center(w) for h, w in zip(headers, widths, strict=True)]),
        border,
    ]
    for row in cells:
        height = max(len(lines) for lines in row)
        for n in range(height):
            out.append(
                _line(
                    [
                        (lines[n] if n < len(lines) else "").ljust(w)
                        for lines, w in zip(row, widths, strict=True)
                    ]
                )
            )
        out.append(border)
    return "\n".join(out)


def _line(values: Sequence[str]) -> str:
    return "| " + " | ".join(values) + " |"
