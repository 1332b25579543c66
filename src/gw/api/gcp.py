"""Google Cloud: the `gcp` Upstream, a service (Cloud Run, Cloud Functions, ...) that only
takes requests carrying a Google-signed identity token for its audience."""

from __future__ import annotations

from gw.api.meta import Model


class GcpUpstreamSpec(Model):
    #: The service's host name (`hello-abc123-uc.a.run.app`); gw also reads `name:port`.
    host: str = ""
    #: The audience the identity token is asked for; unset: `https://<host>`.
    audience: str = ""
