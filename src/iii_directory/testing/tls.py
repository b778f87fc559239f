"""A fixed, test-only TLS identity for loopback servers (`iii_directory.testing.gitremote`).

The certificate is self-signed for `127.0.0.1` / `localhost`, valid 2000–2100, and marked as a CA
so it can be its own trust anchor: a test points git at it with `GIT_SSL_CAINFO`. It protects
nothing and must never be trusted outside tests. It is embedded (rather than generated) so the
tests need neither `openssl` nor a crypto package.
"""

from __future__ import annotations

from pathlib import Path

CERT_PEM = """\
-----BEGIN CERTIFICATE-----
MIIBsTCCAVegAwIBAgICEAAwCgYIKoZIzj0EAwIwJjEkMCIGA1UEAwwbaWlpLWRp
cmVjdG9yeSBsb29wYmFjayB0ZXN0MCAXDTAwMDEwMTAwMDAwMFoYDzIxMDAwMTAx
MDAwMDAwWjAmMSQwIgYDVQQDDBtpaWktZGlyZWN0b3J5IGxvb3BiYWNrIHRlc3Qw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAT0JT0cscHEplCsgrEbL/4m82VTXWDK
YvqW5rRQrn40uCY0khVxTmwncntrO8PnBz4kMSG0L3N1ydDtPryvgqYfo3MwcTAa
BgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwDwYDVR0TAQH/BAUwAwEB/zAOBgNV
HQ8BAf8EBAMCAoQwEwYDVR0lBAwwCgYIKwYBBQUHAwEwHQYDVR0OBBYEFDjwGkgd
v5UgOE49/beZJdZV/BMBMAoGCCqGSM49BAMCA0gAMEUCIB7EkfoaXZ4H2NBxzbdy
vzd1bW1r8T4HVnlHDGmrNDGnAiEAw8eHI+CfZeGhinAkYlJlTh7bMK+PWV3K+tS4
iL6QdSU=
-----END CERTIFICATE-----
"""

KEY_PEM = """\
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgJm65eVVR9Y3bvljp
HtzqWMxisfcZihEpbBuYiqeMV7yhRANCAAT0JT0cscHEplCsgrEbL/4m82VTXWDK
YvqW5rRQrn40uCY0khVxTmwncntrO8PnBz4kMSG0L3N1ydDtPryvgqYf
-----END PRIVATE KEY-----
"""


def write_identity(directory: Path) -> tuple[Path, Path]:
    """Write `loopback-cert.pem` and `loopback-key.pem` into `directory`; return both paths."""
    directory.mkdir(parents=True, exist_ok=True)
    cert = directory / "loopback-cert.pem"
    key = directory / "loopback-key.pem"
    cert.write_text(CERT_PEM, encoding="ascii")
    key.write_text(KEY_PEM, encoding="ascii")
    key.chmod(0o600)
    return cert, key
