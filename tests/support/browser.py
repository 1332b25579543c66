"""A real headless browser for end-to-end tests: Debian's Chromium driven by Playwright.

Playwright's own browser downloads are never used (`playwright install` is not run): it
drives the system's `/usr/bin/chromium` through `executable_path`. Each browser gets a fresh
profile directory (`user_data_dir`), so nothing leaks between tests, and only loopback
addresses are used (map test host names with `host_resolver_rules`).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from playwright.sync_api import BrowserContext, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
#: Quiet and offline: no QUIC, first-run UI, background fetches, component updates or sync.
#: Playwright adds `--headless` and `--user-data-dir` itself.
FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


@contextmanager
def chromium(
    profile: Path,
    *,
    host_resolver_rules: Sequence[str] = (),
    trusted_spki: Sequence[str] = (),
    args: Sequence[str] = (),
) -> Iterator[BrowserContext]:
    """A headless Chromium with a fresh profile in `profile`.

    `host_resolver_rules`: e.g. `MAP app.test 127.0.0.1`, so that a page can be loaded by
    name (the name is then also the TLS SNI and the `Host`). `trusted_spki`: SHA-256 hashes
    of public keys (`spki_hash`) whose certificates Chromium accepts although no root it
    knows signed them: how a test tells the browser to trust a self-signed certificate.
    """
    flags = list(FLAGS)
    if host_resolver_rules:
        flags.append("--host-resolver-rules=" + ", ".join(host_resolver_rules))
    if trusted_spki:
        flags.append("--ignore-certificate-errors-spki-list=" + ",".join(trusted_spki))
    flags.extend(args)
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=flags
        )
        try:
            yield context
        finally:
            context.close()


def spki_hash(certificate: x509.Certificate) -> str:
    """Base64 SHA-256 of the certificate's SubjectPublicKeyInfo, as Chromium's
    `--ignore-certificate-errors-spki-list` wants it."""
    der = certificate.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(der).digest()).decode()
