#!/usr/bin/env python3
"""Fetch delta-rs's test tables into ``.cache/delta-rs-tables/`` (ignored by git).

delta-rs keeps ~50 Delta tables written by Spark, Databricks and delta-rs itself in
``crates/test/tests/data`` (deletion vectors, column mapping, v2 checkpoints, variant, change data
feed, in-commit timestamps, liquid clustering, ...). GitHub is not reachable from every machine
the suite runs on, but PyPI is, and the source distribution of the ``deltalake`` package carries
the whole ``crates/`` tree. This script downloads that sdist (version and sha256 pinned below, the
URL taken from PyPI's JSON API, else the pinned files.pythonhosted.org URL), checks its sha256 and
extracts ``crates/test/tests/data/**`` to ``.cache/delta-rs-tables/data/`` together with delta-rs's
Apache-2.0 license (``LICENSE-delta-rs.txt``) and the ``deltalake-core`` crate's Rust sources
(``rust-tests/crates/core/``: its tests state what the tables hold; the outcomes
``tests/compat/test_delta_rs_tables.py`` asserts cite them by file).

Idempotent: when ``.cache/delta-rs-tables/STAMP`` names the pinned sdist it does nothing.
Standard library only (runs before any virtualenv exists). Usage: ``scripts/delta_rs_tables.py``
(``--dest DIR`` to extract elsewhere).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

VERSION = "1.6.6"
SHA256 = "91864d97adb429fa8b8748b4f68d69adab3d0417ffa9f100bdb85805890c997f"
FILENAME = f"deltalake-{VERSION}.tar.gz"
JSON_API = "https://pypi.org/pypi/deltalake/json"
PINNED_URL = ("https://files.pythonhosted.org/packages/24/7e/"
              "817984d82cec757f6f3a3dbb84afcd85027e7ae02e0a354702c2127f6777/" + FILENAME)
ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DEST = ROOT / ".cache" / "delta-rs-tables"
PREFIX = f"deltalake-{VERSION}/"
DATA = PREFIX + "crates/test/tests/data/"
LICENSE = PREFIX + "crates/core/LICENSE.txt"
RUST_TESTS = PREFIX + "crates/core/"


def sdist_urls() -> list[str]:
    """Where to download the pinned sdist: PyPI's JSON API's URL for it (resolved against the
    API's address, as a mirror may answer with relative URLs), then the pinned URL."""
    urls = []
    try:
        with urllib.request.urlopen(JSON_API, timeout=60) as response:
            info = json.load(response)
        for entry in info.get("releases", {}).get(VERSION, []):
            if entry.get("packagetype") == "sdist" and entry.get("digests", {}).get("sha256") == SHA256:
                urls.append(urllib.parse.urljoin(JSON_API, entry["url"]))
    except (OSError, ValueError) as error:
        print(f"delta_rs_tables: PyPI JSON API unavailable ({error}); using the pinned URL", file=sys.stderr)
    return urls + [PINNED_URL]


def download(target: Path) -> None:
    """Download the sdist to ``target``, checking its sha256; raise SystemExit when no URL works."""
    errors = []
    for url in sdist_urls():
        try:
            with urllib.request.urlopen(url, timeout=300) as response, open(target, "wb") as out:
                shutil.copyfileobj(response, out)
        except OSError as error:
            errors.append(f"{url}: {error}")
            continue
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        if digest == SHA256:
            return
        errors.append(f"{url}: sha256 {digest}, expected {SHA256}")
    raise SystemExit("delta_rs_tables: could not download " + FILENAME + ":\n  " + "\n  ".join(errors))


def extract(sdist: Path, dest: Path) -> int:
    """Extract the test tables, the license and the Rust tests into ``dest``; returns the number
    of table files extracted."""
    count = 0
    with tarfile.open(sdist, "r:gz") as archive:
        for member in archive.getmembers():
            name = member.name
            if name.startswith(DATA):
                relative = "data/" + name[len(DATA):]
            elif name == LICENSE:
                relative = "LICENSE-delta-rs.txt"
            elif name.startswith(RUST_TESTS) and name.endswith(".rs"):
                relative = "rust-tests/" + name[len(PREFIX):]
            else:
                continue
            if not (member.isfile() or member.isdir()) or ".." in Path(relative).parts:
                continue
            member.name = relative
            archive.extract(member, dest, filter="data")
            count += name.startswith(DATA) and member.isfile()
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    dest = parser.parse_args(argv).dest
    stamp = dest / "STAMP"
    want = f"{FILENAME} {SHA256}"
    if stamp.is_file() and stamp.read_text().strip() == want and (dest / "data").is_dir():
        return 0
    print(f"setup: delta-rs test tables: downloading {FILENAME} (PyPI) into {dest} ...", file=sys.stderr)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        sdist = Path(tmp) / FILENAME
        download(sdist)
        staging = Path(tmp) / "tables"
        files = extract(sdist, staging)
        if files < 300:
            raise SystemExit(f"delta_rs_tables: only {files} table files in {FILENAME}")
        (staging / "STAMP").write_text(want + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    print(f"delta_rs_tables: {files} files of delta-rs's test tables in {dest / 'data'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
