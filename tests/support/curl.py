"""``curl`` as an HTTP client for tests of real servers: status, response headers and body of one exchange."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Exchange:
    status: int
    headers: dict[str, str]
    """Response headers, names lower-cased (a repeated header's values joined by ", ")."""
    body: bytes

    @property
    def media(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip()


def curl(*arguments: str) -> Exchange:
    """The exchange ``curl ARGUMENTS`` makes (one request; headers read from ``-D``)."""
    done = subprocess.run(
        ["curl", "-sS", "-D", "/dev/stderr", "-o", "-", *arguments], capture_output=True, check=True, timeout=120
    )
    lines = done.stderr.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    return Exchange(status, headers, done.stdout)
