"""Routing a real folder in the database: `exo ingest --workspace` after quarantine, bulk
quarantine review (each selector, dry run, refusals), and the learned router end to end."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from support.files import write

from exocortex import cli
from exocortex.cli import memory
from exocortex.ingest import pipeline

# Cricket reports and bread recipes: words the default keyword lists do not know.
POOLS = {
    "personal": ["wicket", "bowler", "innings", "batsman", "umpire", "crease", "boundary", "overs", "stumps"],
    "creative": ["dough", "yeast", "flour", "knead", "oven", "crust", "loaf", "sourdough", "starter"],
}
FILLER = ["the", "a", "of", "and", "to", "in", "was", "with", "on", "for", "it", "at", "by", "then"]


def corpus(root: Path, per_workspace: int, seed: int, only: str | None = None) -> dict[str, str]:
    """Files of cricket and baking prose (or only one of them) under root; returns path -> true workspace."""
    rng = random.Random(seed)
    truth = {}
    for ws, pool in POOLS.items():
        for i in range(per_workspace if only in (None, ws) else 0):
            words = [rng.choice(pool) if rng.random() < 0.3 else rng.choice(FILLER) for _ in range(80)]
            name = f"{root.name}-{ws}-{i:03d}.txt"  # unique across the test's sources
            write(root, name, " ".join(words))
            truth[name] = ws
    return truth


def ingest(db, root: Path, workspace: str | None = None) -> pipeline.IngestSummary:
    return pipeline.ingest(db.cfg, root, workspace, dbname=db.name)


def routes(db) -> dict[str, tuple]:
    with db.connect() as conn:
        return {
            path: (stage, ws, method)
            for path, stage, ws, method in conn.execute(
                "select path, stage::text, workspace, route ->> 'method' from exo_private.documents"
            )
        }


def review(db, *args, **kwargs) -> list[tuple]:
    names = ", ".join([*(["%s"] * len(args)), *(f"{k} => %s" for k in kwargs)])
    with db.connect("exo_writer") as conn:
        return conn.execute(
            f"select document_id, path, workspace, stage from exo_private.review_quarantine({names}) order by 1",
            [*args, *kwargs.values()],
        ).fetchall()


def no_default_workspace(db) -> None:
    """What the keyword lists are unsure of waits in quarantine even before the router is
    trained (routing.default_workspace null), as it did before that setting."""
    with db.connect() as conn:
        conn.execute("update exo_private.settings set value = 'null' where key = 'routing.default_workspace'")


@pytest.fixture
def inbox(db, tmp_path) -> Path:
    """Three quarantined documents: a.md with keyword candidates, b.md and c.md without."""
    no_default_workspace(db)
    root = tmp_path / "inbox"
    write(root, "a.md", "postgres index and an invoice")
    write(root, "mail/b.md", "milk, eggs, bread")
    write(root, "mail/c.md", "lorem ipsum")
    ingest(db, root)
    assert {p for p, (stage, *_) in routes(db).items() if stage == "quarantined"} == {
        "a.md",
        "mail/b.md",
        "mail/c.md",
    }
    return root


def test_ingest_with_a_workspace_routes_the_folders_quarantine(db, inbox):
    write(inbox, "d.md", "a new note")
    summary = ingest(db, inbox, "creative")
    assert summary.unchanged == 3 and summary.processed == 1
    assert summary.moved_from_quarantine == 3
    assert summary.routed_by == {"forced": 1}
    assert set(routes(db).values()) == {("chunked", "creative", "forced")}
    again = ingest(db, inbox, "creative")
    assert again.moved_from_quarantine == 0 and again.processed == 0


def test_bulk_review_by_path_confidence_and_all_with_a_dry_run(db, inbox):
    before = routes(db)
    planned = review(db, "reassign", "personal", path_glob="mail/*", dry_run=True)
    assert [(p, ws, stage) for _, p, ws, stage in planned] == [
        ("mail/b.md", "personal", "chunked"),
        ("mail/c.md", "personal", "chunked"),
    ]
    assert routes(db) == before  # a dry run changes nothing
    # The glob also matches the source root's absolute path.
    assert [r[1] for r in review(db, "reject", path_glob=str(inbox / "*c.md"), dry_run=True)] == ["mail/c.md"]
    # Approve takes each document's best candidate; a document without one is left to a person.
    approved = review(db, "approve", min_confidence=0.0)
    assert [r[1] for r in approved] == ["a.md"]
    assert routes(db)["a.md"] == ("chunked", approved[0][2], "review")
    assert review(db, "reassign", "personal", path_glob="mail/b.*")[0][1:] == (
        "mail/b.md",
        "personal",
        "chunked",
    )
    assert review(db, "reject", select_all=True) == [
        (review_id(db, "mail/c.md"), "mail/c.md", None, "skipped")
    ]
    assert routes(db)["mail/b.md"] == ("chunked", "personal", "review")
    assert routes(db)["mail/c.md"][0] == "skipped"
    assert review(db, "reject", select_all=True) == []


def review_id(db, path: str) -> int:
    with db.connect() as conn:
        return conn.execute("select id from exo_private.documents where path = %s", (path,)).fetchone()[0]


REFUSALS = [
    (("approve",), {}, "needs a selector"),
    (("reassign", "nowhere"), {"select_all": True}, "workspace 'nowhere' does not exist"),
    (("reassign",), {"select_all": True}, "target_workspace is required"),
    (("approve", "personal"), {"select_all": True}, "target_workspace is only for reassign"),
    (("approve",), {"min_confidence": 1.5}, "min_confidence must be between 0 and 1"),
    (("approve",), {"min_confidence": -0.1}, "min_confidence must be between 0 and 1"),
    (("promote",), {"select_all": True}, "decision must be approve, reassign or reject"),
    (("reject",), {"path_glob": ""}, "path_glob must not be empty"),
]


def test_bulk_review_refuses_bad_input(db):
    for args, kwargs, message in REFUSALS:
        with pytest.raises(psycopg.errors.InvalidParameterValue, match=message):
            review(db, *args, **kwargs)


def test_quarantine_commands_take_selectors(db, inbox, monkeypatch):
    monkeypatch.setattr(memory, "writer", lambda _cfg, _name: db.connect("exo_writer"))
    runner = CliRunner()

    def exo(*args: str, ok: bool = True) -> str:
        result = runner.invoke(cli.main, ["quarantine", *args], catch_exceptions=False)
        assert (result.exit_code == 0) == ok, result.output
        return result.output

    assert "2 document(s) would be reassigned" in exo("reassign", "personal", "--path", "mail/*", "--dry-run")
    assert "say which documents" in exo("approve", ok=False)
    assert "not both" in exo("reject", "1", "--all", ok=False)
    assert "does not exist" in exo("reassign", "nowhere", "--all", ok=False)
    assert "2 document(s) reassigned" in exo("reassign", "personal", "--path", "mail/*")
    assert routes(db)["mail/b.md"][1] == "personal"
    assert "document" in exo("reassign", str(review_id(db, "a.md")), "technical")
    assert routes(db)["a.md"][1] == "technical"
    # Three documents in three workspaces: too few to learn from, nothing left to move.
    assert "0 document(s) left quarantine, 0 stay" in exo("learn")


def test_the_ingest_summary_says_which_rule_routed_how_many(capsys):
    summary = pipeline.IngestSummary(
        "vault", routed_by=Counter({"learned": 7, "folder": 2}), moved_from_quarantine=3
    )
    memory.print_summary(summary)
    out = capsys.readouterr().out
    assert "routed by: learned 7, folder 2" in out
    assert "moved 3 document(s) from quarantine" in out


def test_learned_router_routes_what_the_keyword_lists_cannot(db, tmp_path):
    no_default_workspace(db)
    truth = corpus(tmp_path / "rest", 30, 11)
    # Before anything is learned, the keyword lists know neither topic: all of it waits.
    baseline = ingest(db, tmp_path / "rest")
    assert baseline.run == {"quarantined": 60} and baseline.router["trained"] is True
    # Seed five of each by hand (a person's --workspace), and the router learns from them.
    for ws in POOLS:
        corpus(tmp_path / "seeds" / ws, 5, 1, only=ws)
        ingest(db, tmp_path / "seeds" / ws, ws)
    with db.connect("exo_writer") as conn:
        learned = conn.execute("select exo_private.learn_routes()").fetchone()[0]
    assert learned["trained"] is True and learned["documents"] == 10 and learned["workspaces"] == 2
    assert learned["moved"] + learned["quarantined"] == 60 and learned["moved"] >= 57
    got = routes(db)
    right = sum(got[p][1] == ws for p, ws in truth.items())
    assert right >= 57
    assert {got[p][2] for p in truth if got[p][1]} == {"learned"}

    # New files: learned routes, unless frontmatter or a folder rule decides; the run says which.
    new = tmp_path / "new"
    write(new, "match.txt", "wicket bowler umpire innings boundary wicket batsman the overs")
    write(new, "declared.md", "---\nworkspace: technical\n---\nwicket bowler umpire innings boundary wicket")
    write(new, "diary/cricket.md", "wicket bowler umpire innings boundary wicket batsman")
    summary = ingest(db, new)
    assert summary.router["trained"] is False  # nothing new was decided since learn_routes
    assert summary.routed_by == {"learned": 1, "frontmatter": 1, "folder": 1}
    got = routes(db)
    assert got["match.txt"] == ("chunked", "personal", "learned")
    assert got["declared.md"] == ("chunked", "technical", "frontmatter")
    assert got["diary/cricket.md"] == ("chunked", "personal", "folder")

    # Learned routes never train the router; decisions by people and rules do.
    with db.connect("exo_writer") as conn:
        methods = {m for (m,) in conn.execute(
            "select d.route ->> 'method' from exo_private.router_training t "
            "join exo_private.documents d on d.id = t.id"
        )}  # fmt: skip
        assert methods == {"forced", "frontmatter", "folder"}
        # Two more training documents (of 10) are under a retraining share of 25 %, not under 0.
        assert conn.execute("select exo_private.train_router(false, 0.25)").fetchone()[0]["trained"] is False
        retrained = conn.execute("select exo_private.train_router()").fetchone()[0]
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="min_change must be between 0 and 1"):
            conn.execute("select exo_private.train_router(false, 2)")
    assert retrained["trained"] is True and retrained["documents"] == 12


def test_a_persons_review_outranks_the_learned_router(db, tmp_path):
    for ws in POOLS:
        corpus(tmp_path / ws, 5, 3, only=ws)
        ingest(db, tmp_path / ws, ws)
    write(tmp_path / "new", "x.txt", "wicket bowler umpire innings boundary wicket batsman")
    ingest(db, tmp_path / "new")
    assert routes(db)["x.txt"] == ("chunked", "personal", "learned")
    doc_id = review_id(db, "x.txt")
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.review_document(%s, 'reassign', 'creative')", (doc_id,))
        conn.execute("select exo_private.train_router(true)")
        conn.execute("select exo_private.rebuild()")
    assert routes(db)["x.txt"] == ("chunked", "creative", "review")


def test_learning_moves_what_the_default_workspace_took_while_the_router_could_not_judge(
    db, tmp_path, monkeypatch
):
    monkeypatch.setattr(memory, "writer", lambda _cfg, _name: db.connect("exo_writer"))

    def learn() -> str:
        result = CliRunner().invoke(cli.main, ["quarantine", "learn"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    def chunks(workspace: str) -> dict[str, list[int]]:
        with db.connect() as conn:
            return {
                path: ids
                for path, ids in conn.execute(
                    "select d.path, array_agg(c.id order by c.id) from exo_private.documents d "
                    "join exo_private.chunks c on c.document_id = d.id and c.workspace = %s group by 1",
                    (workspace,),
                )
            }

    truth = corpus(tmp_path / "first", 30, 11)
    write(
        tmp_path / "first",
        "both.txt",
        "the wicket and the dough, the bowler and the yeast, innings and flour",
    )
    # The keyword lists know neither topic and the router has learned nothing: all to personal.
    assert ingest(db, tmp_path / "first").defaulted == {"personal": 61}
    out = learn()
    assert "61 document(s) stay in the default workspace: the router cannot judge yet" in out
    assert {routes(db)[p] for p in [*truth, "both.txt"]} == {("chunked", "personal", "default")}

    for ws in POOLS:  # five of each placed by a person teach the router
        corpus(tmp_path / "seeds" / ws, 5, 1, only=ws)
        ingest(db, tmp_path / "seeds" / ws, ws)
    before = chunks("personal")
    out = learn()
    got = routes(db)
    # The trained router's confident routes: baking moves to creative, cricket stays in personal.
    moved = [p for p in truth if got[p][1] == "creative"]
    stayed = [p for p in truth if got[p][1] == "personal"]
    unsure = [p for p in [*truth, "both.txt"] if got[p][0] == "quarantined"]
    assert (
        f"of the documents the default workspace held: {len(moved)} moved (creative {len(moved)}), "
        f"{len(unsure)} to quarantine (the router is unsure), {len(stayed)} stay (the router agrees)"
    ) in out.splitlines()
    assert len(moved) >= 27 and len(stayed) >= 27 and len(moved) + len(stayed) + len(unsure) == 61
    assert "both.txt" in unsure  # half cricket, half baking: it waits for a person
    assert all(truth[p] == "creative" for p in moved) and all(truth[p] == "personal" for p in stayed)
    assert {got[p][2] for p in moved + stayed + unsure} == {"learned"}
    # A moved document is chunked in its new workspace; one that stays keeps its chunks as they were.
    assert set(moved) <= set(chunks("creative")) and not set(moved) & set(chunks("personal"))
    assert all(chunks("personal")[p] == before[p] for p in stayed)
    assert not set(unsure) & (set(chunks("personal")) | set(chunks("creative")))

    assert "default workspace" not in learn()  # nothing is left to the default rule
