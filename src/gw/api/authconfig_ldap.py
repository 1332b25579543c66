"""`ldap` of an AuthConfig: the request's basic-auth credentials are bound at an LDAP server,
and the user's entry must be a member of one of `allowedGroups` (unless
`disableGroupChecking`), its memberships read as the user or as a service account whose
credentials are in a Secret (`groupLookupSettings`)."""

from __future__ import annotations

from gw.api.meta import Model, ResourceRef


class LdapConnectionPool(Model):
    max_size: int | None = None
    initial_size: int | None = None


class LdapServiceAccount(Model):
    credentials_secret_ref: ResourceRef | None = None
    check_groups_with_service_account: bool = False


class Ldap(Model):
    address: str
    user_dn_template: str = ""
    membership_attribute_name: str = ""
    allowed_groups: list[str] = []
    pool: LdapConnectionPool | None = None
    search_filter: str = ""
    disable_group_checking: bool = False
    group_lookup_settings: LdapServiceAccount | None = None
