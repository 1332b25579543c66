"""A real OpenLDAP `slapd` for the LDAP tests: its own configuration file, database folder
and free loopback port, no system service. Started in the foreground (`-d 0`) so that it
stops with the test; the directory is loaded through the server itself (`ldapadd` as the
root DN), so that the `memberof` overlay fills in each user's `memberOf`.

The directory is the established gateway's LDAP guide's, under `dc=example,dc=com`:
`marco` (developers), `rick` (developers, managers), `scottc` (developers, sales), and a
service account `cn=reader` that may read group memberships.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support.ports import free_port
from tests.support.processes import Process
from tests.support.wait import wait_until

BASE = "dc=example,dc=com"
ROOT_DN, ROOT_PASSWORD = f"cn=admin,{BASE}", "root-password-not-used-by-gw"
READER_DN = f"cn=reader,{BASE}"
USER_DN_TEMPLATE = f"uid=%s,ou=people,{BASE}"
PASSWORDS = {"marco": "marcopwd", "rick": "rickpwd", "scottc": "scottcpwd"}
GROUPS = {
    "developers": ("marco", "rick", "scottc"),
    "sales": ("scottc",),
    "managers": ("rick",),
}
SLAPD = Path("/usr/sbin/slapd")


def group_dn(name: str) -> str:
    return f"cn={name},ou=groups,{BASE}"


class Slapd:
    def __init__(
        self,
        workdir: Path,
        reader_password: str = "reader-pwd",
        passwords: dict[str, str] | None = None,
    ) -> None:
        """`passwords` replaces the users' passwords (user → password)."""
        if not SLAPD.exists() or shutil.which("ldapadd") is None:
            raise RuntimeError("slapd or ldapadd is not installed: run scripts/system-deps")
        self.dir = workdir / f"slapd-{free_port()}"
        (self.dir / "data").mkdir(parents=True)
        self.reader_password = reader_password
        self.passwords = {**PASSWORDS, **(passwords or {})}
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.url = f"ldap://{self.address}"
        (self.dir / "slapd.conf").write_text(self._config())
        self.process: Process | None = None
        self.start()
        self._load()

    def start(self) -> None:
        self.process = Process(
            [str(SLAPD), "-d", "0", "-f", str(self.dir / "slapd.conf"), "-h", self.url + "/"],
            {},
            self.dir / "slapd.log",
        )
        wait_until(self._answers, what=f"slapd on {self.port}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    def _answers(self) -> bool:
        run = subprocess.run(
            ["ldapsearch", "-x", "-H", self.url, "-s", "base", "-b", "", "namingContexts"],
            capture_output=True,
            timeout=5,
        )
        return run.returncode in (0, 32)

    def _config(self) -> str:
        return f"""\
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload memberof
pidfile {self.dir}/slapd.pid
database mdb
suffix "{BASE}"
rootdn "{ROOT_DN}"
rootpw {ROOT_PASSWORD}
directory {self.dir}/data
maxsize 10485760
overlay memberof
memberof-group-oc groupOfNames
memberof-member-ad member
memberof-memberof-ad memberOf
access to attrs=userPassword by self read by anonymous auth by * none
access to * by self read by dn.exact="{READER_DN}" read by * none
"""

    def _load(self) -> None:
        entries = [
            f"dn: {BASE}\nobjectClass: dcObject\nobjectClass: organization\n"
            "o: example\ndc: example",
            f"dn: ou=people,{BASE}\nobjectClass: organizationalUnit\nou: people",
            f"dn: ou=groups,{BASE}\nobjectClass: organizationalUnit\nou: groups",
            f"dn: {READER_DN}\nobjectClass: simpleSecurityObject\nobjectClass: organizationalRole\n"
            f"cn: reader\nuserPassword: {self.reader_password}",
        ]
        entries += [
            f"dn: {USER_DN_TEMPLATE % user}\nobjectClass: inetOrgPerson\ncn: {user}\nsn: {user}\n"
            f"uid: {user}\nuserPassword: {password}"
            for user, password in self.passwords.items()
        ]
        entries += [
            f"dn: {group_dn(group)}\nobjectClass: groupOfNames\ncn: {group}\n"
            + "\n".join(f"member: {USER_DN_TEMPLATE % m}" for m in members)
            for group, members in GROUPS.items()
        ]
        subprocess.run(
            ["ldapadd", "-x", "-H", self.url, "-D", ROOT_DN, "-w", ROOT_PASSWORD],
            input="\n\n".join(entries) + "\n",
            text=True,
            capture_output=True,
            check=True,
            timeout=10,
        )
