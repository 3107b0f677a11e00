"""The runtime's Debian package list, shared with docker/Dockerfile."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files

PACKAGE_LIST = "debian-packages.txt"


@dataclass(frozen=True)
class Package:
    name: str
    part: str  # "postgres", "models" or "ocr"
    extensions: tuple[str, ...]


def read_packages() -> list[Package]:
    text = files("exocortex.runtime").joinpath(PACKAGE_LIST).read_text()
    packages = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 3 or fields[1] not in {"postgres", "models", "ocr"}:
            raise ValueError(f"{PACKAGE_LIST}:{lineno}: expected 'package part extensions', got {raw!r}")
        exts = () if fields[2] == "-" else tuple(fields[2].split(","))
        packages.append(Package(fields[0], fields[1], exts))
    return packages


def package_for_extension(extension: str) -> str | None:
    """The Debian package that provides an extension, to name it in an error."""
    for package in read_packages():
        if extension in package.extensions:
            return package.name
    return None
