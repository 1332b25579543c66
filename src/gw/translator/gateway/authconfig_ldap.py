"""`ldap` → `gw.wire.extauth_ldap.Ldap`: the address split, the templates and filter checked,
the service account's credentials read from their Secret.

`address` is `host:port` as the API reference writes it, or `ldap://host[:port]` /
`ldaps://host[:port]` as the guide does (ports 389 / 636 by default). `userDnTemplate` must
hold exactly one `%s`. The service account's Secret is of type
`extauth.vendor.io/accountcredentials` with `username` (a DN) and `password`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from gw.api.authconfig_ldap import Ldap
from gw.api.secret import ACCOUNT_CREDENTIALS_TYPE
from gw.translator.gateway.authstep import Needs, StepContext, secret_value
from gw.wire import extauth_ldap
from gw.wire.extauth_basic import AUTHORIZATION

DEFAULT_FILTER = "(uid=*)"


def needs(ldap: Ldap) -> Needs:
    return Needs(headers=(AUTHORIZATION,))


def build(ldap: Ldap, ctx: StepContext) -> extauth_ldap.Ldap | None:
    address = _address(ldap.address, ctx)
    template = ldap.user_dn_template
    if template.count("%s") != 1:
        ctx.error(
            "userDnTemplate", "must hold %s exactly once, e.g. uid=%s,ou=people,dc=example,dc=com"
        )
    search_filter = ldap.search_filter or DEFAULT_FILTER
    if not _balanced(search_filter):
        ctx.error(
            "searchFilter",
            f"{search_filter!r} is not an LDAP filter: write it in parentheses, "
            "e.g. (objectClass=*)",
        )
    pool = ldap.pool
    max_size = pool.max_size if pool and pool.max_size is not None else 5
    initial = pool.initial_size if pool and pool.initial_size is not None else 2
    if not 1 <= max_size <= 100 or not 0 <= initial <= max_size:
        ctx.error("pool", "maxSize must be 1 to 100 and initialSize 0 to maxSize")
    account = _service_account(ldap, ctx)
    if not ldap.allowed_groups and not ldap.disable_group_checking:
        ctx.warning("allowedGroups", "no groups allowed: every user is refused (403)")
    if ctx.report.errors or address is None:
        return None
    lookup = ldap.group_lookup_settings
    return extauth_ldap.Ldap(
        host=address[0],
        port=address[1],
        tls=address[2],
        user_dn_template=template,
        membership_attribute=ldap.membership_attribute_name or "memberOf",
        allowed_groups=tuple(
            dict.fromkeys(extauth_ldap.normalized_dn(g) for g in ldap.allowed_groups)
        ),
        search_filter=search_filter,
        disable_group_checking=ldap.disable_group_checking,
        pool_max_size=max_size,
        pool_initial_size=initial,
        service_account=account,
        check_groups_with_service_account=bool(lookup and lookup.check_groups_with_service_account),
    )


def _address(address: str, ctx: StepContext) -> tuple[str, int, bool] | None:
    text = address if "://" in address else f"ldap://{address}"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if (
        parts is None
        or parts.scheme not in ("ldap", "ldaps")
        or not parts.hostname
        or parts.path.strip("/")
    ):
        ctx.error("address", f"{address!r} is not host:port nor ldap://host:port (or ldaps://)")
        return None
    tls = parts.scheme == "ldaps"
    return parts.hostname, port or (636 if tls else 389), tls


def _balanced(search_filter: str) -> bool:
    depth = 0
    for c in search_filter:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0 and search_filter.startswith("(") and search_filter.endswith(")")


def _service_account(ldap: Ldap, ctx: StepContext) -> extauth_ldap.ServiceAccount | None:
    lookup = ldap.group_lookup_settings
    if lookup is None:
        return None
    field = "groupLookupSettings.credentialsSecretRef"
    if lookup.credentials_secret_ref is None:
        if lookup.check_groups_with_service_account:
            ctx.error(field, "required with checkGroupsWithServiceAccount: the account's Secret")
        return None
    if not lookup.check_groups_with_service_account:
        ctx.warning(
            field, "not used: set checkGroupsWithServiceAccount to read groups as this account"
        )
    ref = lookup.credentials_secret_ref
    username = secret_value(
        ref, ACCOUNT_CREDENTIALS_TYPE, "username", field, ctx, "authcredentials"
    )
    if username is None:
        return None
    password = secret_value(
        ref, ACCOUNT_CREDENTIALS_TYPE, "password", field, ctx, "authcredentials"
    )
    if password is None:
        return None
    return extauth_ldap.ServiceAccount(username=username, password=password)
