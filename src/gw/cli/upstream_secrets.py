"""`gwctl create secret header|aws|azure`: the secrets gw sends on to upstreams, as the
established tool makes them (REFERENCE.md §1.16, §7.6). The commands join `gwctl create
secret` (`create.secret_app`).

- `header`: type `gw.vendor.io/header`, one key per header, for `headerSecretRef` in
  `requestHeadersToAdd` (docs/headers.md).
- `aws`: an `Opaque` secret with `aws_access_key_id`, `aws_secret_access_key` and, for
  temporary credentials, `aws_session_token`, for `aws` upstreams.
- `azure`: an `Opaque` secret whose key `azure` holds `apiKeys: {function: key}`, for
  `azure` upstreams.

Values given as `-` are read from stdin, keeping them out of shell history and `ps`; gwctl
never prints them back (`--dry-run` redacts them).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
import yaml

from gw.cli.command import AdminUrl, fail
from gw.cli.create import (
    DryRun,
    Namespace,
    chosen_name,
    create_secret,
    key_values,
    secret_app,
    secret_manifest,
)
from gw.cli.install import CONTROLLER_NAMESPACE

HEADER_TYPE = "gw.vendor.io/header"
OPAQUE_TYPE = "Opaque"
#: The keys of an AWS secret, as aws upstreams read them.
AWS_ACCESS_KEY, AWS_SECRET_KEY, AWS_SESSION_TOKEN = (
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
)
#: The key of an Azure secret that holds the functions' keys.
AZURE_KEY = "azure"

NameArgument = Annotated[
    str | None, typer.Argument(metavar="[NAME]", help="Secret name (or --name).")
]
NameOption = Annotated[str | None, typer.Option("--name", help="Secret name.")]


@secret_app.command("header")
def secret_header(
    name_argument: NameArgument = None,
    name: NameOption = None,
    headers: Annotated[
        str,
        typer.Option(
            "--headers",
            help="name=value,...: the headers to add; `-` reads one name=value per line "
            "from stdin.",
        ),
    ] = "",
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Create a header secret (type gw.vendor.io/header): each entry is a request header
    that `headerSecretRef` adds."""
    secret_name = chosen_name(name, name_argument, "secret", "secret header")
    text = (
        ",".join(line.strip() for line in sys.stdin if line.strip()) if headers == "-" else headers
    )
    if not text:
        fail("headers not provided: give --headers name=value,...")
    values = key_values(text, "--headers")
    create_secret(
        secret_manifest(namespace, secret_name, HEADER_TYPE, values), "Header", dry_run, admin_url
    )


@secret_app.command("aws")
def secret_aws(
    name_argument: NameArgument = None,
    name: NameOption = None,
    access_key: Annotated[str, typer.Option("--access-key", help="AWS access key id.")] = "",
    secret_key: Annotated[
        str,
        typer.Option("--secret-key", help="AWS secret access key; `-` reads it from stdin."),
    ] = "",
    session_token: Annotated[
        str,
        typer.Option("--session-token", help="AWS session token (temporary credentials)."),
    ] = "",
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Create an AWS secret (Opaque: aws_access_key_id, aws_secret_access_key and
    aws_session_token) for `aws` upstreams."""
    secret_name = chosen_name(name, name_argument, "secret", "secret aws")
    secret_value = sys.stdin.readline().rstrip("\r\n") if secret_key == "-" else secret_key
    if not access_key:
        fail("access key not provided: give --access-key")
    if not secret_value:
        fail("secret key not provided: give --secret-key (or --secret-key - to read stdin)")
    values = {AWS_ACCESS_KEY: access_key, AWS_SECRET_KEY: secret_value}
    if session_token:
        values[AWS_SESSION_TOKEN] = session_token
    create_secret(
        secret_manifest(namespace, secret_name, OPAQUE_TYPE, values), "AWS", dry_run, admin_url
    )


@secret_app.command("azure")
def secret_azure(
    name_argument: NameArgument = None,
    name: NameOption = None,
    api_keys: Annotated[
        str,
        typer.Option(
            "--api-keys", help="function=key,...: the functions' keys (`_master` for the app's)."
        ),
    ] = "",
    namespace: Namespace = CONTROLLER_NAMESPACE,
    dry_run: DryRun = False,
    admin_url: AdminUrl = None,
) -> None:
    """Create an Azure secret (Opaque, key `azure`: apiKeys) for `azure` upstreams."""
    secret_name = chosen_name(name, name_argument, "secret", "secret azure")
    if not api_keys:
        fail("api keys not provided: give --api-keys function=key,...")
    keys = key_values(api_keys, "--api-keys")
    document = yaml.safe_dump({"apiKeys": keys}, sort_keys=True)
    values = {AZURE_KEY: document}
    create_secret(
        secret_manifest(namespace, secret_name, OPAQUE_TYPE, values), "Azure", dry_run, admin_url
    )
