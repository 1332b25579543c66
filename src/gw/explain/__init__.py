"""`explain`: what gw's proxy does with one request, worked out from the configuration the
control plane serves it, the way Envoy works it out.

`explainer.explain(served, request)` is the one entry: `served` holds the Envoy resources of
one proxy role (what `gwctl proxy served-config` fetches over xDS) plus where each route was
written (the Proxy IR's route sources, with files and lines when known); `request` is the
method, URL, headers and connection facts. The answer (`explanation.Explanation`) names the
listener and filter chain, the virtual host and why, the route and the routes before it that
did not match and why, each HTTP filter in chain order with what it does to this request, and
the outcome: the clusters and endpoints it is forwarded to, or the status and body gw gives.

Pure: no I/O, no clock (the time a token is checked against is passed in), so that the CLI,
the tests and a console can all call it. Envoy's matching rules are implemented in
`matching.py`, each checked against Envoy 1.40 by the e2e tests.
"""
