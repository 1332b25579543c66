"""Password hashes as Apache's `htpasswd -m` makes them (Debian's apache2-utils), split the
way `basicAuth` takes them: salt and hash."""

from __future__ import annotations

import shutil
import subprocess


def apr1(user: str, password: str) -> tuple[str, str]:
    """(salt, hash) of the `$apr1$<salt>$<hash>` line `htpasswd -nbm` writes."""
    binary = shutil.which("htpasswd")
    assert binary, "htpasswd is not installed: run scripts/system-deps (apache2-utils)"
    line = subprocess.run(
        [binary, "-nbm", user, password], capture_output=True, text=True, check=True
    ).stdout.strip()
    _, _, salt, hashed = line.split(":", 1)[1].split("$")
    return salt, hashed
