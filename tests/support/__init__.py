"""Helpers the tests and benchmarks share: the checkout's paths, databases, graphs, the stand-in server."""

from pathlib import Path

#: The checkout's root: migrations/, sql/, plpy/, examples/, docker/, schema/.
REPO_ROOT = Path(__file__).resolve().parents[2]
#: The Python package's folder (migrations/, sql/ and plpy/ ship inside it in a wheel).
PACKAGE_DIR = REPO_ROOT / "worker" / "exocortex"
SQL_DIR = REPO_ROOT / "sql"
PLPY_DIR = REPO_ROOT / "plpy"
MIGRATIONS_DIR = REPO_ROOT / "migrations"
