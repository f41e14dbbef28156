"""Re-vendors YASGUI, the SPARQL editor of ``kga serve``'s query page, from npm.

The built files are committed (``kg_adapters/serve/static/yasgui/``), so a clean clone, ``make test``
and an installed wheel never need npm or the network; run this only to move to another release:

    python scripts/vendor_yasgui.py [VERSION]        # default: the version VENDORED.json names

It runs ``npm pack @zazuko/yasgui@VERSION`` (the maintained fork of Triply's YASGUI, MIT; its
``build/yasgui.min.js`` bundles YASQE, YASR and their dependencies, and sets the global ``Yasgui``),
checks the tarball against the sha512 integrity the registry publishes for it, copies
``build/yasgui.min.js`` and ``build/yasgui.min.css`` and records package, version, tarball integrity
and each file's sha256 in ``VENDORED.json`` (``tests/test_query_page.py`` checks the committed files
against it).
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "@zazuko/yasgui"
FILES = ("build/yasgui.min.js", "build/yasgui.min.css")
TARGET = Path(__file__).resolve().parents[1] / "kg_adapters" / "serve" / "static" / "yasgui"
RECORD = TARGET / "VENDORED.json"


def npm(*arguments: str, cwd: Path) -> str:
    done = subprocess.run(["npm", *arguments], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"npm {' '.join(arguments)} failed: {done.stderr.strip()}")
    return done.stdout


def main(version: str) -> None:
    with tempfile.TemporaryDirectory() as work:
        where = Path(work)
        published = json.loads(npm("view", f"{PACKAGE}@{version}", "dist", "--json", cwd=where))
        packed = json.loads(npm("pack", f"{PACKAGE}@{version}", "--json", cwd=where))[0]
        tarball = where / packed["filename"]
        digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
        if digest != published["integrity"] or digest != packed["integrity"]:
            sys.exit(f"{tarball.name}: integrity {digest} is not the published {published['integrity']}")
        record = {
            "package": PACKAGE,
            "version": packed["version"],
            "license": "MIT",
            "tarball": packed["filename"],
            "integrity": digest,
            "files": {},
        }
        with tarfile.open(tarball) as archive:
            for name in FILES:
                member = archive.extractfile(f"package/{name}")
                if member is None:
                    sys.exit(f"{tarball.name} has no {name}")
                data = member.read()
                target = TARGET / Path(name).name
                target.write_bytes(data)
                record["files"][target.name] = hashlib.sha256(data).hexdigest()
    RECORD.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"vendored {PACKAGE}@{record['version']} ({digest[:23]}...) into {TARGET}")


if __name__ == "__main__":
    current = json.loads(RECORD.read_text("utf-8"))["version"] if RECORD.is_file() else None
    wanted = sys.argv[1] if len(sys.argv) > 1 else current
    if wanted is None:
        sys.exit("give the version to vendor, e.g. python scripts/vendor_yasgui.py 4.6.2")
    main(wanted)
