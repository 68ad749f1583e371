"""The page's front-end libraries are the pinned releases listed in view/static/vendor/README.md, with
their licences, and the page loads nothing else (no CDN)."""

from __future__ import annotations

import hashlib
import re

from view.server import STATIC


def test_the_vendored_files_are_the_listed_releases() -> None:
    listed = re.findall(r"`([0-9a-f]{64})`", (STATIC / "vendor" / "README.md").read_text())
    files = sorted(p for p in (STATIC / "vendor").glob("*/*") if p.name != "LICENSE")
    assert sorted(hashlib.sha256(p.read_bytes()).hexdigest() for p in files) == sorted(listed)
    assert all((d / "LICENSE").is_file() for d in (STATIC / "vendor").iterdir() if d.is_dir())


def test_the_page_loads_only_files_of_the_package() -> None:
    html = (STATIC / "index.html").read_text()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(s.startswith("/static/") and (STATIC / s.removeprefix("/static/")).is_file() for s in sources)
