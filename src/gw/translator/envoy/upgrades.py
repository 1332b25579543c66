"""`ir.Upgrade`s → the upgrade configs of an Envoy RouteAction."""

from __future__ import annotations

from collections.abc import Iterable

from envoy.config.route.v3 import route_components_pb2 as rc_pb2

from gw.translator import ir


def build_upgrade_configs(
    upgrades: Iterable[ir.Upgrade],
) -> list[rc_pb2.RouteAction.UpgradeConfig]:
    out = []
    for upgrade in upgrades:
        config = rc_pb2.RouteAction.UpgradeConfig(upgrade_type=upgrade.kind)
        if upgrade.enabled is not None:
            config.enabled.value = upgrade.enabled
        if upgrade.terminate:
            config.connect_config.SetInParent()
        out.append(config)
    return out
