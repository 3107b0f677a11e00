"""The installable package: plpy/ is standard library only, and the wheel works outside the checkout.

The wheel test builds the wheel from a copy of the package's sources (a build in the
checkout leaves build/lib behind, whose stale files would ship in the next wheel),
installs it without the network into a fresh virtualenv in tmp_path, and runs `exo
migrate` and `exo mcp` from there with a cwd outside the checkout. The fresh virtualenv
gets the dependencies through a .pth file naming this virtualenv's site-packages: that
folder is not a site directory of the fresh one, so the editable install's own .pth
(which points at the checkout) is not read, and `exocortex` is the installed copy.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters, stdio_client
from support import MIGRATIONS_DIR, PACKAGE_DIR, PLPY_DIR, REPO_ROOT, SQL_DIR

from exocortex.cli import main
from exocortex.client import mcp_server
from exocortex.ops.migrate import LOCAL_IMPORT, migration_files

#: The files the database needs, where they are in the checkout, and their place in the wheel.
PACKAGE_DATA = (
    (MIGRATIONS_DIR, "*.sql", "exocortex/migrations"),
    (SQL_DIR, "*.sql", "exocortex/sql"),
    (PLPY_DIR, "*.py", "exocortex/plpy"),
    (PACKAGE_DIR / "runtime", "*.txt", "exocortex/runtime"),
    (PACKAGE_DIR / "runtime", "*.conf", "exocortex/runtime"),
)


def foreign_imports(plpy_dir: Path) -> list[str]:
    """Imports in plpy/*.py the migrator cannot inline into a plpython3u body.

    Allowed: the standard library, and a sibling module imported at the top level as
    `from sibling import name` (the only form `# exo:include` replaces with its source).
    """
    siblings = {path.stem for path in plpy_dir.glob("*.py")}
    found = []
    for path in sorted(plpy_dir.glob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = ["." * node.level + (node.module or "")]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                where = f"{path.name}:{node.lineno}"
                if top in siblings:
                    if not (isinstance(node, ast.ImportFrom) and LOCAL_IMPORT.match(lines[node.lineno - 1])):
                        found.append(f"{where}: sibling {name} must be imported as `from {top} import ...`")
                elif not top or top not in sys.stdlib_module_names:
                    found.append(f"{where}: {name} is neither the standard library nor a plpy/ module")
    return found


def test_exo_version_prints_the_installed_package_version():
    version = importlib.metadata.version("exocortex")
    result = CliRunner().invoke(main, ["--version"], prog_name="exo")
    assert (result.exit_code, result.output) == (0, f"exo {version}\n")


def test_plpy_modules_import_only_the_standard_library_and_their_siblings():
    assert foreign_imports(PLPY_DIR) == []


def test_the_plpy_import_check_names_what_the_database_could_not_run(tmp_path):
    (tmp_path / "months.py").write_text("import re\n")
    (tmp_path / "good.py").write_text(
        "from __future__ import annotations\nimport json\nfrom months import x\n"
    )
    (tmp_path / "bad.py").write_text(
        "import psycopg\nfrom exocortex.plpy import model_client\nfrom . import months\n"
        "import months\n\ndef f():\n    from months import y\n"
    )
    assert foreign_imports(tmp_path) == [
        "bad.py:1: psycopg is neither the standard library nor a plpy/ module",
        "bad.py:2: exocortex.plpy is neither the standard library nor a plpy/ module",
        "bad.py:3: . is neither the standard library nor a plpy/ module",
        "bad.py:4: sibling months must be imported as `from months import ...`",
        "bad.py:7: sibling months must be imported as `from months import ...`",
    ]


def _run(argv: list, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, f"{argv} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result


def build_wheel(tmp_path: Path) -> Path:
    """The package's wheel, built offline from a copy of pyproject.toml, README.md, worker/ and the
    database's folders (migrations/, sql/, plpy/)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(PACKAGE_DIR, source / "worker" / "exocortex", ignore=ignore)
    for folder in (MIGRATIONS_DIR, SQL_DIR, PLPY_DIR):
        shutil.copytree(folder, source / folder.name, ignore=ignore)
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "--wheel-dir", wheels, source])
    (wheel,) = wheels.glob("exocortex-*.whl")
    return wheel


def fresh_venv(tmp_path: Path, wheel: Path) -> Path:
    """A virtualenv with the wheel installed (no network) and this one's packages importable."""
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", python]
    _run([*pip, "install", "--no-deps", "--no-index", wheel])
    site = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    (Path(site) / "exocortex-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


@pytest.mark.slow
def test_the_wheel_installed_outside_the_checkout_migrates_and_serves_mcp(cfg, empty_db, tmp_path):
    assert not tmp_path.is_relative_to(REPO_ROOT)
    wheel = build_wheel(tmp_path)

    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("exocortex/")}
    for folder, pattern, inside in PACKAGE_DATA:
        wanted = {f"{inside}/{p.name}" for p in folder.glob(pattern)}
        assert wanted and wanted <= shipped, f"the wheel lacks {sorted(wanted - shipped)}"

    venv = fresh_venv(tmp_path, wheel)
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["EXO_DB_NAME"] = empty_db.name
    if cfg.external_url:
        env["EXO_DATABASE_URL"] = empty_db.url()
    where = _run(
        [venv / "bin" / "python", "-c", "import exocortex, pgmq; print(exocortex.__file__)"],
        cwd=tmp_path,
        env=env,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout

    migrated = _run([venv / "bin" / "exo", "migrate"], cwd=tmp_path, env=env)
    files = [path.name for path in migration_files(MIGRATIONS_DIR)]
    assert f"migrated {empty_db.name}: {len(files)} migration(s) applied" in migrated.stdout
    with empty_db.connect() as conn:
        applied = [r[0] for r in conn.execute("select name from exo_private.schema_migrations order by name")]
    assert applied == files

    params = StdioServerParameters(
        command=str(venv / "bin" / "exo"),
        args=["mcp"],
        env={"EXO_READER_URL": empty_db.url("exo_reader")},
        cwd=tmp_path,
    )
    answers: dict = {}

    async def main() -> None:
        with open(tmp_path / "mcp.log", "w") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                answers["server"] = (await session.initialize()).server_info
                answers["tools"] = {tool.name for tool in (await session.list_tools()).tools}
                answers["status"] = await session.call_tool("status", {})

    anyio.run(main)
    log = (tmp_path / "mcp.log").read_text()
    # The installed distribution's version (the checkout's editable one may be older).
    version = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert (answers["server"].name, answers["server"].version) == ("exocortex", version), log
    assert answers["tools"] == {spec.name for spec in mcp_server.TOOLS if not spec.needs_profile}
    status = answers["status"]
    text = "".join(c.text for c in status.content if c.type == "text")
    assert not status.is_error, text
    assert json.loads(text)["documents"]["total"] == 0
