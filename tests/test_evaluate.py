"""`exo eval extraction` against the real database: the stratified sample, metrics from the
real Gemma model, a stand-in judge, and the command line."""

from __future__ import annotations

import hashlib
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console
from support.db import configure
from support.models import free_ports
from support.standin import Reply, StandIn, chat

from exocortex.cli.eval import eval_group
from exocortex.eval import compare_models as ev
from exocortex.ingest import pipeline

# Two or three sentences each, so that Gemma answers in seconds; NOTE gives relations.
NOTE = "Tomas Berg works at Copperleaf. Tomas Berg lives in Larkhaven. Copperleaf is based in Oslo."
NOTES = {
    "work/copperleaf.md": NOTE,
    "diary/2024-03-02.md": "Today I walked with my sister Maya Lund in Oslo. We had dinner at her flat.",
    "admin/insurance.md": "The insurance policy from Harbor Mutual is due for renewal in May. Premium 410.",
}


def ingest(db, tmp_path: Path, notes: dict[str, str]) -> None:
    root = tmp_path / "vault"
    for name, text in notes.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    pipeline.ingest(db.cfg, root, dbname=db.name)


def use_cli(db, monkeypatch) -> None:
    monkeypatch.setenv("EXO_DB_NAME", db.name)
    if db.cfg.external_url:
        monkeypatch.setenv("EXO_DATABASE_URL", db.url())


def fast_settings(db, url: str, max_tokens: int) -> None:
    """Production settings, only smaller, so that the real model answers quickly."""
    configure(
        db,
        models__chat={"url": url},
        extraction__max_tokens=max_tokens,
        extraction__max_entities=4,
        extraction__max_relations=4,
    )


#: An extraction model's answer for NOTE. The judge tests count verdicts per relation and need
#: a known number of them; the real 270M model keeps zero to three of this note's relations
#: depending on the machine and its load (its own metrics are tested with the real model above).
EXTRACTED = json.dumps(
    {
        "entities": [
            {"name": "Tomas Berg", "type": "Person"},
            {"name": "Copperleaf", "type": "Org"},
            {"name": "Larkhaven", "type": "Place"},
            {"name": "Oslo", "type": "Place"},
        ],
        "relations": [
            {"subject": "Tomas Berg", "predicate": "works at", "object": "Copperleaf"},
            {"subject": "Tomas Berg", "predicate": "lives in", "object": "Larkhaven"},
            {"subject": "Copperleaf", "predicate": "is based in", "object": "Oslo"},
        ],
    }
)

GRAPH_TABLES = ("entities", "mentions", "relations", "extraction_windows", "extraction_generations")


def footprint(db) -> dict:
    """Row counts of the graph tables and the queues, and the windows' extraction columns."""
    with db.connect() as conn:
        out = {t: conn.execute(f"select count(*) from exo_private.{t}").fetchone()[0] for t in GRAPH_TABLES}
        for q in ("embed", "extract", "dead_letter"):
            out[q] = conn.execute(f"select count(*) from pgmq.q_{q}").fetchone()[0]
        out["windows"] = conn.execute(
            "select md5(string_agg(concat_ws('|', id, extracted_generation, extracted_at, extraction_stats), ',' order by id)) "
            "from exo_private.extraction_windows"
        ).fetchone()[0]
    return out


# -- the sample ---------------------------------------------------------------------------


def shares(docs: list[ev.SampledDoc]) -> dict[str, int]:
    return dict(Counter(d.workspace for d in docs))


def test_allocate_is_proportional_with_at_least_one_per_workspace():
    counts = {"technical": 6, "personal": 3, "administrative": 1}
    assert ev.allocate(counts, 5) == {"technical": 3, "personal": 1, "administrative": 1}
    assert ev.allocate(counts, 8) == {"technical": 5, "personal": 2, "administrative": 1}
    assert ev.allocate(counts, 3) == {"technical": 1, "personal": 1, "administrative": 1}
    assert ev.allocate(counts, 2) == {"technical": 1, "personal": 1, "administrative": 0}
    assert ev.allocate(counts, 10) == ev.allocate(counts, 99) == counts
    # 90/10 of 10 is 9/1, not 1 each plus a share of the rest
    assert ev.allocate({"a": 90, "b": 10}, 10) == {"a": 9, "b": 1}
    # the minimum of one is paid for by the largest over-allocation
    assert ev.allocate({"a": 50, "b": 49, "c": 1}, 4) == {"a": 2, "b": 1, "c": 1}
    for n in range(1, 11):
        assert sum(ev.allocate(counts, n).values()) == n


def test_the_sample_is_stratified_reproducible_and_takes_the_first_window(db, tmp_path):
    notes = {
        f"work/tech-{i}.md": f"Note {i} about the postgres server and its vacuum settings." for i in range(5)
    }
    notes |= {f"diary/day-{i}.md": f"Today I felt happy; dinner with a friend, note {i}." for i in range(3)}
    notes["admin/bill.md"] = "The insurance premium bill is due; pay the invoice to the bank."
    paragraph = "The postgres server needs a vacuum of the orders table before the upgrade. " * 12
    notes["work/long.md"] = "\n\n".join([paragraph] * 10)  # more than one extraction window
    ingest(db, tmp_path, notes)
    with db.connect("exo_writer") as conn:
        assert ev.population(conn) == {"administrative": 1, "personal": 3, "technical": 6}
        assert (
            conn.execute(
                "select count(*) from exo_private.extraction_windows w join exo_private.documents d "
                "on d.id = w.document_id where d.path = 'work/long.md'"
            ).fetchone()[0]
            > 1
        )
        five = ev.sample_documents(conn, 5, seed=1)
        assert shares(five) == {"technical": 3, "personal": 1, "administrative": 1}
        assert shares(ev.sample_documents(conn, 8, seed=1)) == {
            "technical": 5,
            "personal": 2,
            "administrative": 1,
        }
        assert shares(ev.sample_documents(conn, 2, seed=1)) == {"technical": 1, "personal": 1}
        # the same seed, the same sample, on another connection too
        with db.connect("exo_writer") as other:
            assert ev.sample_documents(other, 5, seed=1) == five
        others = [ev.sample_documents(conn, 5, seed=s) for s in range(2, 8)]
        assert any([d.document_id for d in o] != [d.document_id for d in five] for o in others)
        # each workspace's share is its first documents by md5(seed || ':' || id)
        ids = conn.execute("select workspace, array_agg(id) from exo_private.documents group by 1").fetchall()
        for workspace, doc_ids in ids:
            ordered = sorted(doc_ids, key=lambda i: (hashlib.md5(f"1:{i}".encode()).hexdigest(), i))
            chosen = [d.document_id for d in five if d.workspace == workspace]
            assert chosen == ordered[: len(chosen)]
        everything = ev.sample_documents(conn, 50, seed=3)
        assert len(everything) == 10
        first_windows = dict(
            conn.execute(
                "select distinct on (document_id) document_id, id from exo_private.extraction_windows "
                "order by document_id, ordinal"
            ).fetchall()
        )
        assert {d.document_id: d.window_id for d in everything} == first_windows
        long = next(d for d in everything if d.path == "work/long.md")
        assert long.window_text.startswith("The postgres server") and len(long.window_text) < len(
            notes["work/long.md"]
        )
    # a document in another stage is not a candidate, even with windows
    with db.connect() as conn:
        conn.execute("update exo_private.documents set stage = 'quarantined' where path = 'admin/bill.md'")
    with db.connect("exo_writer") as conn:
        assert "admin/bill.md" not in {d.path for d in ev.sample_documents(conn, 50, seed=3)}
        assert ev.population(conn) == {"personal": 3, "technical": 6}


# -- the real model ---------------------------------------------------------------------


def test_real_model_metrics_are_consistent_and_nothing_is_written(db, tmp_path, real_models):
    ingest(db, tmp_path, NOTES)
    # Gemma's replies run to ~260 tokens; their first 90 hold the entities that 200 hold (1, 1 and
    # 3 of these notes), at half the time (4 s a note alone)
    fast_settings(db, real_models.chat.url, max_tokens=90)
    before = footprint(db)
    with db.connect("exo_writer") as conn:
        report = ev.evaluate(conn, [], 3, seed=1)
    assert footprint(db) == before
    (result,) = report.results
    assert result.model == real_models.chat.model  # the setting's own model by default
    assert result.sampled == result.docs == 3 and not result.errors
    assert result.entities == sum(d.entities for d in result.documents) > 0
    assert result.relations == sum(d.relations for d in result.documents)
    assert result.entities_per_doc == result.entities / 3
    assert result.relations_per_doc == result.relations / 3
    assert 0 < result.grounding_rate <= 1
    assert result.grounding_rate == result.entities / (result.entities + result.dropped["ungrounded_entity"])
    assert sum(result.dropped.values()) == sum(sum(d.dropped.values()) for d in result.documents)
    assert result.empty == sum(d.entities == 0 for d in result.documents)
    assert result.truncated == sum(d.finish_reason == "length" for d in result.documents)
    assert all(0 < d.completion_tokens <= 90 for d in result.documents)  # max_tokens of the settings
    assert result.seconds == pytest.approx(sum(d.seconds for d in result.documents))
    assert result.docs_per_hour == pytest.approx(3 / result.seconds * 3600) and result.docs_per_hour > 0
    data = json.loads(json.dumps(report.to_json()))
    assert data["sample"] == {
        "seed": 1,
        "n": 3,
        "size": 3,
        "population": {"administrative": 1, "personal": 1, "technical": 1},
        "per_workspace": {"administrative": 1, "personal": 1, "technical": 1},
        "document_ids": [d.document_id for d in report.sample],
    }
    assert data["settings"]["extraction.max_tokens"] == 90
    assert data["settings"]["extraction.max_entities"] == 4
    assert "url" not in json.dumps(data["settings"])
    assert data["models"][0]["entities"] == result.entities


def test_a_stand_in_judge_gives_exact_rates_and_output_writes_json_and_markdown(db, tmp_path, monkeypatch):
    ingest(db, tmp_path, {"work/copperleaf.md": NOTE})
    use_cli(db, monkeypatch)
    answers = iter(["reversed"])
    out = tmp_path / "docs" / "eval-extraction.json"
    with (
        StandIn(lambda path, req: chat(EXTRACTED)) as extractor,
        StandIn(lambda path, req: chat(json.dumps({"verdict": next(answers, "correct")}))) as judge,
    ):
        fast_settings(db, extractor.url, max_tokens=400)
        result = CliRunner().invoke(
            eval_group,
            ["extraction", "--sample", "5", "--seed", "4", "--models", "gemma", "--judge", "judge-model",
             "--judge-endpoint", judge.url, "--json", "--output", str(out)],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    assert json.loads(result.stdout) == written
    assert written["sample"]["seed"] == 4 and written["sample"]["size"] == 1
    (model,) = written["models"]
    k = model["relations"]
    assert model["model"] == "gemma" and model["docs"] == 1
    assert k == 3, model["documents"]
    assert judge.calls("/chat/completions") == k
    assert model["judge"] == {
        "model": "judge-model",
        "judged": k,
        "verdicts": {"correct": k - 1, "reversed": 1, "wrong": 0},
        "relation_correctness": round((k - 1) / k, 4),
        "reversed_direction_rate": round(1 / k, 4),
        "failures": {},
        "seconds": model["judge"]["seconds"],
    }
    assert model["documents"][0]["verdicts"] == ["reversed"] + ["correct"] * (k - 1)
    for _, request in judge.requests:
        assert request["model"] == "judge-model" and request["temperature"] == 0
        schema = request["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["verdict"]["enum"] == ["correct", "reversed", "wrong"]
        assert request["messages"][0]["content"] == ev.JUDGE_PROMPT
        assert NOTE in request["messages"][1]["content"]
    markdown = out.with_suffix(".md").read_text()
    assert markdown.startswith("# Extraction eval")
    assert "| metric | gemma |" in markdown
    assert f"| relations / doc | {k:.2f} |" in markdown
    assert f"| relation correctness | {(k - 1) / k:.1%} |" in markdown
    assert f"| reversed direction | {1 / k:.1%} |" in markdown
    assert f"wrote {out} and {out.with_suffix('.md')}" in result.stderr


def test_a_failing_judge_is_counted_not_fatal(db, tmp_path):
    ingest(db, tmp_path, {"work/copperleaf.md": NOTE})
    answers = iter([Reply(500, {"error": "judge crashed"}), chat("I think it is fine.")])
    with (
        StandIn(lambda path, req: chat(EXTRACTED)) as extractor,
        StandIn(lambda path, req: next(answers, None) or chat('{"verdict": "wrong"}')) as judge,
        db.connect("exo_writer") as conn,
    ):
        fast_settings(db, extractor.url, max_tokens=400)
        report = ev.evaluate(conn, ["gemma"], 1, seed=1, judge="judge-model", judge_url=judge.url)
    (result,) = report.results
    k = result.relations
    assert k == 3 and judge.calls("/chat/completions") == k
    assert result.judge.failures == {"http_5xx": 1, "bad_verdict": 1}
    assert result.judge.verdicts == ({"wrong": k - 2} if k > 2 else {})
    assert result.judge.correctness == (0.0 if k > 2 else None)
    console = Console(width=120, file=io.StringIO())
    console.print(ev.render_table(report))
    table = console.file.getvalue()
    assert [line.split()[-2] for line in table.splitlines() if "judge failures" in line] == ["2"]
    assert "bad_verdict" in table and "http_5xx" in table


# -- the command line -------------------------------------------------------------------


def test_a_model_endpoint_that_is_down_shows_as_errors_per_document(db, tmp_path, monkeypatch):
    ingest(db, tmp_path, NOTES)
    use_cli(db, monkeypatch)
    down = f"http://127.0.0.1:{free_ports()[0]}/v1"
    result = CliRunner().invoke(
        eval_group, ["extraction", "--sample", "3", "--models", "alpha,beta", "--endpoint", down]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any("alpha" in line and "beta" in line for line in lines)
    assert [line.split() for line in lines if "endpoint_down" in line] == [
        ["│", "endpoint_down", "│", "3", "│", "3", "│"]
    ]
    assert [line.split() for line in lines if "documents answered" in line] == [
        ["│", "documents", "answered", "│", "0", "/", "3", "│", "0", "/", "3", "│"]
    ]
    assert (
        lines[-1]
        == "sample: 3 of 3 documents (seed 1): administrative 1 of 1, personal 1 of 1, technical 1 of 1"
    )
    assert "alpha: 3 of 3 documents failed with endpoint_down, the first: " in result.stderr


def test_nothing_to_sample_fails_with_a_message(db, monkeypatch):
    use_cli(db, monkeypatch)
    result = CliRunner().invoke(eval_group, ["extraction"])
    assert result.exit_code == 1
    assert "no document has extraction windows yet" in result.stderr
    result = CliRunner().invoke(eval_group, ["extraction", "--output", "report.txt"])
    assert result.exit_code == 1 and "--output must name a .json file" in result.stderr
