"""What the install declares besides the user's resources, and the Settings read over it.

`gw up` runs the extauth and rate-limit servers in its own process and says where
(`Options.extauth_server`, `Options.ratelimit_server`). Stage 1 declares them as the
established gateway's install does: the Upstreams `extauth` and `rate-limit` in the
install's namespace (static, HTTP/2: both speak gRPC), and Settings naming them in
`extauth.extauthzServerRef` and `ratelimitServer.ratelimitServerRef`. So Settings written
for the established gateway work as written, and Settings that set only part of a block
(`extauth: {requestTimeout: 1s}`) keep the rest of the install's.

- A resource of the user's with the same key wins whole: an Upstream `gw-system.extauth`
  in the folder (even one whose manifest does not parse) is the one used, and nothing is
  declared under that name. That is how an operator points the name at servers they run
  elsewhere, as they would edit the install's Upstream.
- The user's Settings `<namespace>.default` are read over the install's field by field:
  what the user sets wins; a block both set is merged the same way.
- Declared resources are not the user's: they have no status and are not in the store.
"""

from __future__ import annotations

from collections.abc import Container
from typing import TypeVar

from gw import api, defaults
from gw.api import ResourceKey
from gw.api.meta import Model
from gw.snapshot import Snapshot
from gw.translator.options import InstalledServer, Options
from gw.translator.reports import Reports

SETTINGS_NAME = "default"

M = TypeVar("M", bound=Model)


def declared_upstreams(
    options: Options, taken: Container[ResourceKey]
) -> dict[ResourceKey, api.Upstream]:
    """The Upstreams of the servers the install runs, but for keys `taken` by the user."""
    out: dict[ResourceKey, api.Upstream] = {}
    for name, server in _servers(options):
        upstream = _upstream(name, options.namespace, server)
        if upstream.key not in taken:
            out[upstream.key] = upstream
    return out


def read_settings(
    snapshot: Snapshot, options: Options, reports: Reports
) -> tuple[api.Settings | None, ResourceKey | None]:
    """The Settings that are read (the user's over the install's) and the key of the
    user's, when there are some. Only `<namespace>.default` is read; any other Settings
    say they are ignored."""
    user = None
    for settings in snapshot.of_kind(api.Settings):
        meta = settings.metadata
        if (meta.namespace, meta.name) != (options.namespace, SETTINGS_NAME):
            reports.of(settings.key).warning(
                "metadata",
                f"only Settings {options.namespace}.{SETTINGS_NAME} is read; this one is ignored",
            )
        else:
            reports.of(settings.key)  # Accepted
            user = settings
            _warn_directory(settings, reports)
    installed = install_settings(options)
    if user is None:
        return installed, None
    if installed is None:
        return user, user.key
    return user.model_copy(update={"spec": merge_under(user.spec, installed.spec)}), user.key


def _warn_directory(settings: api.Settings, reports: Reports) -> None:
    source = settings.spec.directory_config_source
    if source is not None and source.directory is not None:
        reports.of(settings.key).warning(
            "spec.directoryConfigSource.directory",
            "not supported: gw serves the folder named on its command line (gw up DIR, "
            "gw controlplane --dir DIR); remove the field",
        )


def install_settings(options: Options) -> api.Settings | None:
    """The Settings naming the servers the install runs (None when it runs none)."""
    namespace = options.namespace
    spec: dict[str, object] = {}
    if options.extauth_server is not None:
        ref = {"name": defaults.EXTAUTH_UPSTREAM, "namespace": namespace}
        spec["extauth"] = {"extauthzServerRef": ref}
    if options.ratelimit_server is not None:
        ref = {"name": defaults.RATELIMIT_UPSTREAM, "namespace": namespace}
        spec["ratelimitServer"] = {"ratelimitServerRef": ref}
    if not spec:
        return None
    return api.Settings.model_validate(
        {**_head(api.Settings, SETTINGS_NAME, namespace), "spec": spec}
    )


def merge_under(high: M, low: M) -> M:
    """`high`, with each field it does not set taken from `low`; a block both set is
    merged the same way (a list or a map set in `high` wins whole)."""
    update = {}
    for name in low.model_fields_set:
        theirs = getattr(low, name)
        if name not in high.model_fields_set:
            update[name] = theirs
            continue
        mine = getattr(high, name)
        if isinstance(mine, Model) and isinstance(theirs, Model):
            update[name] = merge_under(mine, theirs)
    return high.model_copy(update=update) if update else high


def _servers(options: Options) -> list[tuple[str, InstalledServer]]:
    named = (
        (defaults.EXTAUTH_UPSTREAM, options.extauth_server),
        (defaults.EXTAUTH_UPSTREAM + defaults.EXTAUTH_HTTP_SUFFIX, options.extauth_http_server),
        (defaults.RATELIMIT_UPSTREAM, options.ratelimit_server),
    )
    return [(name, server) for name, server in named if server is not None]


def _upstream(name: str, namespace: str, server: InstalledServer) -> api.Upstream:
    """gRPC servers speak HTTP/2; the extauth server's HTTP checks HTTP/1.1."""
    http2 = not name.endswith(defaults.EXTAUTH_HTTP_SUFFIX)
    static = {"hosts": [{"addr": server.host, "port": server.port}]}
    return api.Upstream.model_validate(
        {
            **_head(api.Upstream, name, namespace),
            "spec": {"static": static, "useHttp2": True} if http2 else {"static": static},
        }
    )


def _head(kind: type[api.Resource], name: str, namespace: str) -> dict[str, object]:
    return {
        "apiVersion": kind.API_VERSION,
        "kind": kind.KIND,
        "metadata": {"name": name, "namespace": namespace},
    }
