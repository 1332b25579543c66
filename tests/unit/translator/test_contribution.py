"""`Contribution.placed`: the contribution with its virtual hosts placed on listeners."""

from __future__ import annotations

import dataclasses
from typing import Any

from gw.translator.gateway.contribution import Contribution


def _every_field_set() -> Contribution:
    """A contribution with a distinct value in every field, whatever fields it has (the
    types are not checked at run time; a field added later is set too)."""
    values: dict[str, Any] = {
        f.name: (f"{f.name}-value",) for f in dataclasses.fields(Contribution)
    }
    return Contribution(**values)


def test_placed_keeps_every_other_field() -> None:
    contribution = _every_field_set()
    hosts: Any = (("gw-system.web", "host"),)
    assert contribution.placed(hosts) == dataclasses.replace(contribution, virtual_hosts=hosts)


def test_a_host_placed_nowhere_takes_no_secret_along() -> None:
    contribution = _every_field_set()
    assert contribution.placed(()) == dataclasses.replace(
        contribution, virtual_hosts=(), secrets=()
    )
