"""The console: web pages served by the control plane's admin server under `/console/`.

Every resource with its status (rejected first), the route tree per host, `explain` as a
form, live traffic per route from the proxy's statistics, and the proxies with the
configuration versions they acknowledged. Server-rendered (Jinja2, every value escaped), a
small style sheet and a small script; no build step. Read-only: the one thing it can do
besides reading, sending an explained request through the proxy, is off unless the install
turns it on (`gw up --console-send`).

It reads what the admin API reads (`gw.admin.server`'s functions, the control plane's
translation result) and shows nothing the admin API redacts.
"""
