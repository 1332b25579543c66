"""Stage 1: resources → Proxy.

`passes.py` lists the passes in the order they run over one build context (`build.py`) and
holds `build_proxy()`, the entry point. This `__init__` imports nothing, so that using one
stage-1 module (the admin server reads `jwks.py`) does not load all of them.
"""
