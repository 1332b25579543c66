"""The translator: resources in, Envoy configuration and statuses out.

It owns the one entry point, `translation.translate()`, a pure function (no I/O, no clock,
no globals, no environment: the same input gives byte-identical output), and everything
under it: stage 1 (`gateway/`: resources → the Proxy IR of `ir`, with findings in
`reports.py` and every reference resolved through `refs.py`) and stage 2 (`envoy/`: the
Proxy → xDS resources). The configs of gw's own servers it builds are the contracts of
`gw.wire`.

It must not read the store, serve xDS, run a CLI, or import the extauth or rate-limit
servers (import-linter enforces it). This `__init__` stays empty: importing `translator.ir`
or `translator.options` must not load the API models, the stages or protobuf.
"""
