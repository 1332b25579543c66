"""`gwctl get virtualhostoption|routeoption [NAME]`: the options resources virtual hosts and
routes refer to through `optionsConfigRefs`, with their status and the option fields each
one sets (the fields a referrer may take from it), as tables or manifests (`-o yaml|json`).
The established tool has no table for them; the columns follow `gwctl get routetable`. The
commands join the `gwctl get` group (`get.app`)."""

from __future__ import annotations

from typing import Any

from gw.cli.get import register, state_text
from gw.cli.tables import render_table

__all__ = ["options_table"]


def options_table(title: str, resources: list[dict[str, Any]]) -> str:
    rows = [
        [
            r["metadata"]["name"],
            state_text(r),
            "\n".join(sorted((r.get("spec", {}).get("options") or {}).keys())),
        ]
        for r in resources
    ]
    return render_table([title, "Status", "Options"], rows)


register(
    "VirtualHostOption",
    ("virtualhostoption", "virtualhostoptions", "vhopts"),
    "List VirtualHostOptions with their status and the options they set.",
    lambda resources: options_table("Virtual Host Option", resources),
)
register(
    "RouteOption",
    ("routeoption", "routeoptions", "rtopts"),
    "List RouteOptions with their status and the options they set.",
    lambda resources: options_table("Route Option", resources),
)
