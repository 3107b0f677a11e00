"""Helpers the tests and benchmarks share: the checkout's paths, databases, graphs, the stand-in server."""

from pathlib import Path

#: The checkout's root (examples/, docker/, schema/ live here; the package's data is under worker/exocortex/).
REPO_ROOT = Path(__file__).resolve().parents[2]
#: The package's folder, where migrations/, sql/ and plpy/ ship.
PACKAGE_DIR = REPO_ROOT / "worker" / "exocortex"
