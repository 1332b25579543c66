"""Headless Chromium (the Debian package, never a downloaded browser) driven by Playwright,
for the OIDC login tests.

Chromium treats http://localhost and http://127.0.0.1 as secure contexts: cookies marked
`Secure` are set and sent there over plain HTTP. On any other host name over HTTP they are
dropped, which is what `cookieOptions.notSecure` is for.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium() -> Iterator[Browser]:
    path = shutil.which("chromium") or CHROMIUM
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
