"""The package as README's architecture section draws it: parts grouped by role, each module
using only the public names of the others."""

from __future__ import annotations

import ast

from support import PACKAGE_DIR, REPO_ROOT

#: The package's top level: the two modules every part uses, then one folder per role.
TOP_LEVEL = {
    "__init__.py", "config.py", "db.py",
    "cli", "client", "eval", "extraction", "ingest", "models", "ops", "runtime", "worker",
}  # fmt: skip


def _python_files():
    for root in (PACKAGE_DIR, REPO_ROOT / "plpy", REPO_ROOT / "bench"):
        yield from (p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts)


def _private_uses(path) -> list[str]:
    """`from exocortex... import _name` (or from bench...), and `module._name` on a module imported
    from exocortex."""
    tree = ast.parse(path.read_text())
    modules: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(("exocortex", "bench")):
            for alias in node.names:
                if alias.name.startswith("_") and alias.name != "__version__":
                    found.append(f"from {node.module} import {alias.name}")
                modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name.startswith("exocortex")}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_the_top_level_holds_config_db_and_one_folder_per_role():
    shown = {
        p.name for p in PACKAGE_DIR.iterdir() if p.name != "__pycache__" and not p.name.endswith(".egg-info")
    }
    assert shown - {"migrations", "sql", "plpy"} == TOP_LEVEL


def test_no_module_uses_another_modules_private_names():
    offenders = {str(p.relative_to(REPO_ROOT)): _private_uses(p) for p in _python_files()}
    assert {path: uses for path, uses in offenders.items() if uses} == {}
