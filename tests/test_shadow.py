"""`exo eval shadow`: scoring as plain Python, the shipped questions file, and one run of the
command over the example vault (ingested and embedded by the real MiniLM, one database for the
module) with three questions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.vault import EXAMPLES, VAULT, embedded_vault

from exocortex.cli.eval import eval_group
from exocortex.eval.shadow import (
    Item,
    Question,
    ShadowProblem,
    holds,
    load_questions,
    packet_items,
    parse_question,
    score,
    source_cited,
    stale_as_current,
)

SHIPPED = EXAMPLES / "questions" / "shadow.jsonl"
RENT = Question("How much is my rent?", expect=("1,210",), stale=("1,150",))


# -- scoring ------------------------------------------------------------------------------


def test_holds_ignores_case_and_runs_of_white_space():
    assert holds("Rent: EUR\n  1,210 a MONTH", "eur 1,210 a month")
    assert not holds("EUR 1,21 0", "1,210")


def test_a_chunk_with_only_the_old_value_gives_it_as_current():
    old, both, new = Item("rent EUR 1,150"), Item("from 1,150 to 1,210"), Item("rent 1,210")
    assert stale_as_current(RENT, [new, old], dated=False) == ["1,150"]
    assert stale_as_current(RENT, [both], dated=False) == []  # states the change
    assert stale_as_current(RENT, [new], dated=False) == []


def test_the_packet_is_excused_by_a_later_dated_answer_only():
    old = Item("rent EUR 1,150", date(2023, 9, 1))
    assert stale_as_current(RENT, [old, Item("rent 1,210", date(2025, 4, 2))], dated=True) == []
    assert stale_as_current(RENT, [old, Item("rent 1,210", date(2023, 9, 1))], dated=True) == []
    assert stale_as_current(RENT, [old, Item("rent 1,210", date(2020, 1, 1))], dated=True) == ["1,150"]
    assert stale_as_current(RENT, [old, Item("rent 1,210")], dated=True) == ["1,150"]  # undated answer
    # The text before the evidence (facts, capsules) states what is current: a stale value there
    # is never excused, and an answer there excuses every older block.
    current = Item("rent 1,150", current=True)
    assert stale_as_current(RENT, [current, Item("1,210", date(2026, 1, 1))], dated=True) == ["1,150"]
    assert stale_as_current(RENT, [Item("rent 1,210", current=True), old], dated=True) == []


def test_score_counts_answers_leaks_and_sources():
    q = Question(
        "q",
        expect=("Pixel", "13 March 2021"),
        withheld=("hospice",),
        sources=("admin/facts.md", "chat/whatsapp"),
    )
    text = "Dog: pixel. At the hospice."
    paths = ["admin/facts.md", "chat/whatsapp/1/w", "diary/x.md"]
    outcome = score(q, text, [Item(text)], paths, tokens=7, ms=1.5, dated=False)
    assert outcome.answers == ["Pixel"] and outcome.any and not outcome.every
    assert outcome.leaked == ["hospice"]
    assert outcome.sources == ["admin/facts.md", "chat/whatsapp"]
    assert outcome.returned == 3 and not outcome.answered
    assert score(q, "Pixel, 13 March 2021", [], [], 5, 1.0, False).answered


def test_a_source_is_the_path_a_path_ending_in_it_or_a_folder_holding_it():
    assert source_cited("admin/facts.md", "admin/facts.md")
    assert source_cited("vault/admin/facts.md", "admin/facts.md")
    assert source_cited("chat/whatsapp/iris/3", "chat/whatsapp")
    assert not source_cited("admin/facts.md.bak", "admin/facts.md")
    assert not source_cited("chat/whatsapp2/x", "chat/whatsapp")


def test_packet_items_split_the_evidence_by_its_cited_blocks():
    text = (
        "# Context for: rent\n\n## Current facts\n"
        "- Sam Rivera, landlord: Prudence Hale (declared, since 2020-08-15; admin/facts.md)\n\n"
        "## Capsules\n[C1] summary of administrative:admin/b.eml (2025-04-02, current); cites chunk(s) 7\n"
        "The rent rises.\n\n## Evidence\n"
        "[1] administrative:admin/a.md (2023-09-01, recent)\nrent 1,150\n\n"
        "[2] administrative:admin/b.eml (2025-04-02, current)\nrent 1,210\n\n## Provenance\nrerank: x\n"
    )
    used = [
        {
            "citation": "administrative:admin/a.md (2023-09-01, recent)",
            "written_at": "2023-09-01",
            "document_id": 1,
        },
        {
            "citation": "administrative:admin/b.eml (2025-04-02, current)",
            "written_at": "2025-04-02",
            "document_id": 2,
        },
    ]
    capsules = [{"n": "C1", "citation": "administrative:admin/b.eml (2025-04-02, current)", "document_id": 2}]
    preamble, capsule, first, second = packet_items({"text": text, "used": used, "capsules": capsules})
    assert preamble.current and "Context for" not in preamble.text and "Current facts" in preamble.text
    assert "rises" not in preamble.text
    assert capsule.written_at == date(2025, 4, 2) and not capsule.current
    assert capsule.text.endswith("The rent rises.\n") and "Evidence" not in capsule.text
    assert first.written_at == date(2023, 9, 1) and "1,150" in first.text and "1,210" not in first.text
    assert second.written_at == date(2025, 4, 2) and "Provenance" not in second.text
    # A packet whose blocks cannot be found is one undated item.
    assert packet_items({"text": text, "used": [{"citation": "nowhere", "written_at": None}]}) == [Item(text)]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"question": "q"}', "expect must name at least one answer string"),
        ('{"question": " ", "expect": ["a"]}', "question must be a non-empty string"),
        ('{"question": "q", "expect": ["a"], "as_of": "last year"}', "as_of must be a day as YYYY-MM-DD"),
        ('{"question": "q", "expect": ["a"], "stale": "b"}', "stale must be a list of non-empty strings"),
        ('{"question": "q", "expect": ["a"], "answer": "b"}', "unknown field(s) answer"),
        ("[1]", "a question must be a JSON object"),
        ("{nope", "not JSON"),
    ],
)
def test_a_bad_question_line_is_refused_naming_the_line_and_field(tmp_path, line, message):
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "fine", "expect": ["x"]}\n\n' + line + "\n")
    with pytest.raises(ShadowProblem) as exc:
        load_questions(path)
    assert str(exc.value).startswith("q.jsonl:3: ") and message in str(exc.value)


def test_parse_question_reads_every_field():
    q = parse_question(
        {
            "question": " Where? ",
            "expect": ["a"],
            "as_of": "2015-01-01",
            "workspaces": ["personal"],
            "kind": "x",
        },
        "here",
    )
    assert q == Question("Where?", ("a",), as_of=date(2015, 1, 1), workspaces=("personal",), kind="x")


def test_the_shipped_questions_load_and_name_real_sources_and_answers():
    questions = load_questions(SHIPPED)
    kinds = {q.kind for q in questions}
    assert {"changed", "archival", "chat", "deferred"} <= kinds
    assert all(q.stale for q in questions if q.kind == "changed")
    chats = " ".join(p.read_text() for p in (EXAMPLES / "chats").rglob("*") if p.is_file())
    for q in questions:
        texts = []
        for source in q.sources:
            if source.startswith("chat/"):
                texts.append(chats)
            else:
                assert (VAULT / source).is_file(), source
                texts.append(_text(VAULT / source))
        if q.sources:  # each answer string is in one of the expected sources
            assert all(any(holds(t, e) for t in texts) for e in q.expect), q.question


def _text(path: Path) -> str:
    if path.suffix in (".md", ".eml"):
        return path.read_text()
    return path.read_bytes().decode("latin-1")


# -- one run over the example vault ---------------------------------------------------------


@pytest.fixture(scope="module")
def vault(cfg, template_db, real_models) -> Iterator:
    with embedded_vault(cfg, template_db, "exo_shadow", real_models.embeddings.url) as db:
        yield db


QUESTIONS = [
    {"question": "What was my finishing time in the 2015 Larkhaven Marathon?", "expect": ["4:12:37"],
     "sources": ["diary/2015/2015-10-18.md"], "kind": "archival"},
    {"question": "When did Grandpa Walter die?", "expect": ["Walter Rivera", "withheld"],
     "withheld": ["St Brigid"], "kind": "deferred"},
    {"question": "What is my home server called?", "expect": ["zebra-unicorn-9"], "stale": ["shoebox"],
     "workspaces": ["technical"]},
]  # fmt: skip


def use_cli(db, monkeypatch) -> None:
    monkeypatch.setenv("EXO_DB_NAME", db.name)
    if db.cfg.external_url:
        monkeypatch.setenv("EXO_DATABASE_URL", db.url())


def test_the_command_scores_each_context_and_writes_json(vault, tmp_path, monkeypatch):
    use_cli(vault, monkeypatch)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    out = tmp_path / "shadow.json"
    result = CliRunner().invoke(eval_group, ["shadow", str(questions), "--k", "5", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "overall" in result.stdout and "packet" in result.stdout
    data = json.loads(out.read_text())
    assert data["questions_file"] == "questions.jsonl" and data["k"] == 5 and data["token_budget"] == 4000
    assert data["methods"] == ["packet", "vector", "bm25"]
    assert str(tmp_path) not in out.read_text()
    marathon, walter, server = data["questions"]
    for q in data["questions"]:
        for method in data["methods"]:
            r = q["results"][method]
            assert set(r) == {
                "answered", "every_answer", "any_answer", "answers_found", "stale_as_current", "leaked",
                "sources_found", "returned", "tokens", "ms",
            }  # fmt: skip
            assert r["tokens"] > 0 and r["ms"] > 0 and r["returned"] >= 1
            if method != "packet":
                assert r["returned"] <= 5
    # Every context of the marathon question holds its time; BM25 returns the diary entry.
    for method in data["methods"]:
        assert marathon["results"][method]["every_answer"], method
    assert marathon["results"]["bm25"]["sources_found"] == ["diary/2015/2015-10-18.md"]
    # The packet withholds the deferred subject and says so; plain BM25 has no deference.
    assert walter["results"]["packet"]["answered"]
    assert walter["results"]["packet"]["leaked"] == []
    assert walter["results"]["bm25"]["leaked"] == ["St Brigid"]
    assert not walter["results"]["bm25"]["answered"]
    # An answer the vault never gives is held by no context, so the chunk that names the old
    # server (work/pixelbox.md, BM25's best in technical) gives shoebox as current.
    for method in data["methods"]:
        assert not server["results"][method]["any_answer"], method
    assert server["results"]["bm25"]["stale_as_current"] == ["shoebox"]
    assert server["workspaces"] == ["technical"]
    overall = data["overall"]
    assert overall["packet"]["questions"] == 3 and overall["packet"]["leaked"] == 0
    assert overall["bm25"]["leaked"] == 1
    assert overall["bm25"]["tokens_total"] == sum(q["results"]["bm25"]["tokens"] for q in data["questions"])


def test_the_command_refuses_a_bad_questions_file_before_connecting(tmp_path):
    questions = tmp_path / "questions.jsonl"
    questions.write_text('{"question": "q", "expect": []}\n')
    result = CliRunner().invoke(eval_group, ["shadow", str(questions)])
    assert result.exit_code == 1
    assert "questions.jsonl:1: expect must name at least one answer string" in result.stderr


def test_the_command_refuses_a_database_without_chunks(db, monkeypatch):
    use_cli(db, monkeypatch)
    result = CliRunner().invoke(eval_group, ["shadow", str(SHIPPED)])
    assert result.exit_code == 1
    assert "the database holds no chunks yet" in result.stderr
