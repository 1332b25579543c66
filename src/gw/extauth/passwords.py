"""Password hashes of `basicAuth`: Apache's APR1 (iterated MD5, what `htpasswd -m` writes as
`$apr1$<salt>$<hash>`) and salted SHA-1 (hex of SHA-1 over password + salt).

APR1 is the md5-crypt construction of FreeBSD with the magic `$apr1$`: an MD5 over the
password, magic and salt mixed with a digest of password + salt + password, then 1000
rounds that re-hash it with the password and salt in a fixed pattern, written out in
crypt's base-64 alphabet. It costs about a millisecond of CPU, which is why the basic-auth
check remembers the credentials it has already accepted.
"""

from __future__ import annotations

import hashlib
import hmac

_ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_MAGIC = b"$apr1$"
#: The byte triplets of the final digest, in the order crypt writes them out.
_GROUPS = ((0, 6, 12), (1, 7, 13), (2, 8, 14), (3, 9, 15), (4, 10, 5))


def apr1(password: str, salt: str) -> str:
    """The hash part of `$apr1$<salt>$<hash>` (22 characters)."""
    secret, salt_bytes = password.encode(), salt.encode()[:8]
    mixed = hashlib.md5(secret + salt_bytes + secret).digest()
    context = secret + _MAGIC + salt_bytes
    for left in range(len(secret), 0, -16):
        context += mixed[: min(16, left)]
    length = len(secret)
    while length:
        context += b"\0" if length & 1 else secret[:1]
        length >>= 1
    digest = hashlib.md5(context).digest()
    for i in range(1000):
        block = secret if i & 1 else digest
        if i % 3:
            block += salt_bytes
        if i % 7:
            block += secret
        block += digest if i & 1 else secret
        digest = hashlib.md5(block).digest()
    out = "".join(_b64((digest[a] << 16) | (digest[b] << 8) | digest[c], 4) for a, b, c in _GROUPS)
    return out + _b64(digest[11], 2)


def sha1(password: str, salt: str) -> str:
    return hashlib.sha1((password + salt).encode()).hexdigest()


def matches(algorithm: str, password: str, salt: str, hashed: str) -> bool:
    """True when `password` with `salt` hashes to `hashed` (SHA-1 hex in any case)."""
    if algorithm == "sha1":
        return hmac.compare_digest(sha1(password, salt), hashed.lower())
    return hmac.compare_digest(apr1(password, salt), hashed)


def _b64(value: int, count: int) -> str:
    out = []
    for _ in range(count):
        out.append(_ITOA64[value & 0x3F])
        value >>= 6
    return "".join(out)
