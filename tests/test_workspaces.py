"""Workspaces a person defines (issue 30): `exo workspace add | list | rename | remove` on the real
server: a new workspace takes documents and is searched, removing one refuses while documents
live there or moves them (searchable where they went), names are refused with the reason, and
only the writer may call the functions that change workspaces."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from psycopg.types.json import Jsonb
from support.files import write

from exocortex.cli import main, memory, output, workspaces
from exocortex.ingest import pipeline


@pytest.fixture
def exo(db, monkeypatch):
    """`exo ...` against the test's database, its writes as exo_writer as the CLI makes them."""
    monkeypatch.setattr(workspaces, "writer", lambda _cfg, _name: db.connect("exo_writer"))
    monkeypatch.setattr(output, "writer", lambda _cfg, _name: db.connect("exo_writer"))
    monkeypatch.setenv("COLUMNS", "300")
    runner = CliRunner()

    def run(*args: str, ok: bool = True) -> str:
        result = runner.invoke(main, list(args), catch_exceptions=False)
        assert (result.exit_code == 0) == ok, result.output
        return " ".join(result.output.split())

    return run


def ingest(db, root: Path, workspace: str | None = None) -> pipeline.IngestSummary:
    return pipeline.ingest(db.cfg, root, workspace, dbname=db.name)


def found(db, query: str, workspace: str) -> set[str]:
    """The paths exo.search finds for query in one workspace, as the reader."""
    with db.connect("exo_reader") as conn:
        return {p for (p,) in conn.execute("select path from exo.search(%s, array[%s])", (query, workspace))}


def counts(exo) -> dict[str, tuple[int, int]]:
    return {w["name"]: (w["documents"], w["chunks"]) for w in json.loads(exo("workspace", "list", "--json"))}


@pytest.fixture
def garden(db, tmp_path, exo) -> Path:
    """The workspace garden-notes, added, with two documents ingested into it."""
    assert "added workspace garden-notes" in exo(
        "workspace", "add", "garden-notes", "--description", "the allotment"
    )
    root = tmp_path / "garden"
    write(root, "beans.md", "Runner beans climb the hazel poles by the compost heap.")
    write(root, "frost.md", "A late frost took the courgette seedlings on the allotment.")
    summary = ingest(db, root, "garden-notes")
    assert summary.workspaces == {"garden-notes": 2}
    return root


def test_add_then_ingest_into_it_and_search_it(db, garden, exo):
    assert found(db, "courgette seedlings frost", "garden-notes") == {"frost.md"}
    with db.connect("exo_reader") as conn:
        (graph,) = conn.execute("select graph from exo.workspaces where name = 'garden-notes'").fetchone()
    assert graph == "graph_garden-notes"
    with db.connect() as conn:
        # its own partition with its BM25 indexes, an HNSW index per embedding model, its graph
        indexes = {
            i
            for (i,) in conn.execute("select indexname from pg_indexes where tablename like '%garden-notes%'")
        }
        models = conn.execute("select count(*) from exo_private.embedding_models").fetchone()[0]
        assert conn.execute(
            "select count(*) from ag_catalog.ag_graph where name = 'graph_garden-notes'"
        ).fetchone()
    assert {"chunks_garden-notes_bm25", "chunks_garden-notes_bm25_open"} <= indexes
    assert len([i for i in indexes if i.endswith("_hnsw")]) == models
    listed = counts(exo)
    assert listed["garden-notes"] == (2, 2)
    assert set(listed) == {"administrative", "creative", "garden-notes", "personal", "technical"}
    table = exo("workspace", "list")
    assert "personal (default)" in table and "the allotment" in table


def test_add_routes_what_waited_for_it_and_the_summary_names_the_command(db, tmp_path, exo, capsys):
    root = tmp_path / "mine"
    write(root, "notes/standup.md", "---\nworkspace: work\n---\nPostgres index tuning all day.")
    summary = ingest(db, root)
    memory.print_summary(summary)
    out = " ".join(capsys.readouterr().out.split())
    assert "1 frontmatter names workspace 'work', which does not exist" in out
    assert "fix: exo workspace add work creates it" in out
    with db.connect() as conn:
        (fix,) = conn.execute(
            "select w.fix from exo_private.documents d cross join lateral exo_private.document_why(d) w"
        ).fetchone()
    assert fix.startswith("exo workspace add work creates it and routes it there")
    assert json.loads(exo("workspace", "list", "--json"))[0]["quarantined_for"] == 0
    assert "1 document(s) whose frontmatter named it left quarantine" in exo("workspace", "add", "work")
    assert found(db, "postgres index tuning", "work") == {"notes/standup.md"}


def test_remove_refuses_while_documents_live_there_then_moves_them(db, garden, exo):
    refused = exo("workspace", "remove", "garden-notes", ok=False)
    assert "workspace 'garden-notes' is not empty: 2 document(s) live there" in refused
    assert "--move-to OTHER" in refused
    assert counts(exo)["garden-notes"] == (2, 2)  # nothing changed
    done = exo("workspace", "remove", "garden-notes", "--move-to", "personal")
    assert "moved 2 document(s)" in done and "removed workspace garden-notes" in done
    assert "garden-notes" not in counts(exo)
    assert found(db, "courgette seedlings frost", "personal") == {"frost.md"}
    with db.connect() as conn:
        left = conn.execute(
            "select (select count(*) from pg_class where relname like '%garden-notes%'), "
            "(select count(*) from ag_catalog.ag_graph where name = 'graph_garden-notes'), "
            "(select array_agg(distinct review ->> 'decision') from exo_private.documents), "
            "(select workspace from exo_private.sources)"
        ).fetchone()
    assert left == (0, 0, ["reassigned"], "personal")
    # the folder's next ingest keeps them where they went (the reassignment is a review decision)
    assert ingest(db, garden).workspaces == {"personal": 2}


def test_remove_carries_facts_settings_and_rules_over(db, garden, exo):
    with db.connect("exo_writer") as conn:
        conn.execute(
            "select * from exo_private.observe(%s)",
            (
                Jsonb(
                    {
                        "workspace": "garden-notes",
                        "subject": "Beans",
                        "attribute": "height",
                        "value": "2 m",
                        "observed_at": "2024-06-01T00:00:00Z",
                        "source": "hand",
                    }
                ),
            ),
        )
        conn.execute(
            "update exo_private.settings set value = '\"garden-notes\"' where key = 'routing.default_workspace'"
        )
        conn.execute(
            'update exo_private.settings set value = value || \'[{"folder": "veg", "workspace": "garden-notes"}]\' '
            "where key = 'routing.folder_rules'"
        )
    assert "the setting(s) routing.default_workspace name it" in exo(
        "workspace", "remove", "garden-notes", ok=False
    )
    done = exo("workspace", "remove", "garden-notes", "--move-to", "creative")
    assert "settings changed: routing.default_workspace, routing.folder_rules" in done
    with db.connect() as conn:
        got = conn.execute(
            "select (select value #>> '{}' from exo_private.settings where key = 'routing.default_workspace'), "
            "(select r ->> 'workspace' from exo_private.settings s, jsonb_array_elements(s.value) r "
            " where s.key = 'routing.folder_rules' and r ->> 'folder' = 'veg'), "
            "(select array_agg(distinct workspace) from exo_private.observations), "
            "(select array_agg(distinct workspace) from exo_private.facts)"
        ).fetchone()
    assert got == ("creative", "creative", ["creative"], ["creative"])


def test_rename_an_empty_workspace_and_refuse_one_with_documents(db, garden, exo):
    assert "added workspace spare" in exo("workspace", "add", "spare")
    assert "renamed workspace spare to spare_2" in exo("workspace", "rename", "spare", "spare_2")
    assert "spare" not in counts(exo) and counts(exo)["spare_2"] == (0, 0)
    refused = exo("workspace", "rename", "garden-notes", "garden", ok=False)
    assert "workspace 'garden-notes' holds 2 document(s)" in refused
    assert "exo workspace add garden, then exo workspace remove garden-notes --move-to garden" in refused
    assert counts(exo)["garden-notes"] == (2, 2)
    # renaming what the settings name carries them over, the keyword lists too
    renamed = exo("workspace", "rename", "personal", "own")
    assert "chat.workspace, facts.observation_workspace, routing.default_workspace" in renamed
    assert "routing.folder_rules, routing.keywords" in renamed
    with db.connect() as conn:
        got = conn.execute(
            "select (select value #>> '{}' from exo_private.settings where key = 'chat.workspace'), "
            "(select value ? 'own' and not value ? 'personal' from exo_private.settings where key = 'routing.keywords')"
        ).fetchone()
    assert got == ("own", True)
    assert "own (default)" in exo("workspace", "list")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("Work", "may hold only lower-case letters, digits, - and _"),
        ("my work", "may hold only lower-case letters, digits, - and _"),
        ("work.notes", "may hold only lower-case letters, digits, - and _"),
        ("9lives", "must begin with a lower-case letter"),
        ("_x", "must begin with a lower-case letter"),
        ("work-", "must not end with -"),
        ("w", "is too short"),
        ("a" * 33, "is 33 characters long; at most 32"),
    ],
)
def test_names_are_refused_with_the_reason(db, exo, name, reason):
    out = exo("workspace", "add", name, ok=False)
    assert f"workspace name '{name}' {reason}" in out


def test_existing_and_missing_names_are_refused(db, exo):
    assert "workspace 'personal' exists already" in exo("workspace", "add", "personal", ok=False)
    assert "workspace 'nowhere' does not exist" in exo("workspace", "remove", "nowhere", ok=False)
    assert "--move-to: workspace 'nowhere' does not exist" in exo(
        "workspace", "remove", "creative", "--move-to", "nowhere", ok=False
    )
    assert "the workspace being removed" in exo(
        "workspace", "remove", "creative", "--move-to", "creative", ok=False
    )
    assert "workspace 'personal' exists already" in exo(
        "workspace", "rename", "creative", "personal", ok=False
    )
    assert "removed workspace creative" in exo(
        "workspace", "remove", "creative"
    )  # empty: no --move-to needed


def test_the_reader_cannot_change_workspaces(db):
    calls = [
        "select exo_private.add_workspace('sneaky')",
        "select exo_private.remove_workspace('personal', 'technical')",
        "select exo_private.rename_workspace('creative', 'sneaky')",
        "insert into exo_private.workspaces (name, description) values ('sneaky', '')",
    ]
    for sql in calls:
        with db.connect("exo_reader") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(sql)
    with db.connect("exo_reader") as conn:
        assert "sneaky" not in {n for (n,) in conn.execute("select name from exo.workspaces")}
