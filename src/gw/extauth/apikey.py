"""The `apiKeyAuth` check: the key in `headerName` must be one of the configured secrets'.

The key is hashed (SHA-256) and its digest looked up: one hash and one dictionary lookup per
request. An accepted key identifies its secret's name as the user (Settings
`userIdHeader`), puts the key into the chain's state (`api_key_value`), and copies the
secret's values that `headersFromMetadataEntry` names into headers (and into the state under
the header's name). A missing or unknown key gets `401` with `www-authenticate: API key is
missing or invalid` and an empty body; so does a key whose secret lacks a value marked
`required`.

Keys come with the configuration: a secret that is edited, added or deleted reaches the
server with the next configuration, and the previous keys stop working at that moment.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from gw.extauth.decisions import Allow, Decision, Deny, Request, State
from gw.wire.extauth_apikey import ApiKey, ApiKeyAuth

if TYPE_CHECKING:
    from gw.extauth.checks import Shared

DENIED = Deny(401, headers=(("www-authenticate", "API key is missing or invalid"),))
STATE_KEY = "api_key_value"


def build(config: ApiKeyAuth, where: str, shared: Shared) -> ApiKeyCheck:
    return ApiKeyCheck(config)


class ApiKeyCheck:
    def __init__(self, config: ApiKeyAuth) -> None:
        self.header = config.header_name
        self.copies = config.headers_from_metadata
        self._allowed = {k.api_key_sha256: self._allow(k) for k in config.keys}

    def owns(self, request: Request) -> bool:
        return False

    async def check(self, request: Request, state: State) -> Decision:
        presented = request.headers.get(self.header)
        if not presented:
            return DENIED
        digest = hashlib.sha256(presented.encode()).hexdigest()
        allow = self._allowed.get(digest)
        if allow is None:
            return DENIED
        state[STATE_KEY] = presented
        for header, value in allow.headers:
            state[header] = value
        return allow

    async def close(self) -> None:
        return None

    def _allow(self, key: ApiKey) -> Allow | None:
        """The answer for `key`, built once (None: its secret lacks a required value)."""
        data = dict(key.secret_data)
        headers = []
        for copy in self.copies:
            value = data.get(copy.key)
            if value is None:
                if copy.required:
                    return None
                continue
            headers.append((copy.header, value))
        return Allow(headers=tuple(headers), user=key.user)
