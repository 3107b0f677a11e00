"""The paths the README and docs/ name resolve from the checkout's root."""

from __future__ import annotations

import re

from support import REPO_ROOT

#: A path in backticks under one of the checkout's top-level folders.
PATH = re.compile(r"`((?:sql|plpy|migrations|worker|bench|tests|docs|docker|examples|schema)/[^`\s]*)`")
#: Placeholders, not files: a glob, NAME, <workspace>, NNNN.
PLACEHOLDER = re.compile(r"[*<]|NAME|NNNN")


def named_paths(text: str) -> list[str]:
    paths = []
    for match in PATH.finditer(text):
        path = re.sub(r"[:#].*$", "", match.group(1).rstrip(".,;"))
        if not PLACEHOLDER.search(path):
            paths.append(path)
    return paths


def test_the_named_paths_are_found_by_the_scanner():
    assert named_paths("see `sql/400_search.sql:25`, `plpy/*.py` and `worker/x.py#L3`.") == [
        "sql/400_search.sql",
        "worker/x.py",
    ]


def test_every_path_the_docs_name_exists():
    documents = [
        REPO_ROOT / "README.md",
        REPO_ROOT / "sql" / "README.md",
        *sorted((REPO_ROOT / "docs").glob("*.md")),
    ]
    missing = [
        f"{doc.relative_to(REPO_ROOT)}: {path}"
        for doc in documents
        for path in named_paths(doc.read_text())
        if not (REPO_ROOT / path).exists()
    ]
    assert missing == []
