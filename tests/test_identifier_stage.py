"""The identifier stage (exo_private.stage_sql_identifier) on the synthetic corpus: a rare string's
holders come through the trigram index, a common one's through BM25's first hits, and the string
is matched literally and case-insensitively either way."""

from __future__ import annotations

import psycopg
import pytest
from support.db import cloned_database

from bench import search_corpus

BANDS = ["current", "recent", "archival"]


@pytest.fixture(scope="module")
def corpus(cfg, template_db):
    with cloned_database(cfg, template_db, "identifier_stage") as db, db.connect() as conn:
        info = search_corpus.build_corpus(conn, 1500, seed=5)
        yield conn, info


def stage(conn, identifier: str, limit: int, query: str | None = None) -> tuple[list[int], str]:
    """The stage's rows (chunk ids, best first) for one string in the technical workspace, asked in
    `query` (the string alone by default), and its plan."""
    (text,) = conn.execute(
        "select exo_private.stage_sql('identifier', 'technical', 1, 384, false)"
    ).fetchone()
    # Prepared with the parameters' types, as exo_private.retrieve prepares it. At 600 chunks a
    # sequential scan is cheaper than any index: the plans at a million are bench.search_latency's.
    conn.execute("set enable_seqscan = off")
    conn.execute(f"prepare identifier_stage (text, text[], date, int, text[], text) as {text}")
    try:
        cur = psycopg.ClientCursor(conn)
        args = (identifier, BANDS, search_corpus.date.today(), limit, [], query or identifier)
        rows = cur.execute("execute identifier_stage (%s, %s, %s, %s, %s, %s)", args).fetchall()
        explain = "explain (analyze, costs off) execute identifier_stage (%s, %s, %s, %s, %s, %s)"
        plan = "\n".join(r[0] for r in cur.execute(explain, args))
    finally:
        conn.execute("deallocate identifier_stage")
    return [r[0] for r in rows], plan


def holders(conn, text: str) -> set[int]:
    return {
        r[0]
        for r in conn.execute(
            "select id from exo_private.chunks_technical where strpos(lower(body), lower(%s)) > 0", (text,)
        )
    }


def test_a_rare_identifier_is_found_through_its_trigrams(corpus):
    conn, info = corpus
    ticket = next(i for i in info.identifiers if i.startswith(("INC", "CHG", "PRB")))
    found, plan = stage(conn, ticket, 30)
    assert set(found) == holders(conn, ticket) == set(info.identifiers[ticket])
    assert stage(conn, ticket.lower(), 30)[0] == found
    assert "Bitmap Index Scan on chunks_technical_lower_idx" in plan, plan
    # BM25's walk over the prefix's postings never runs.
    assert "Index Scan using chunks_technical_bm25_open" in plan and "(never executed)" in plan, plan


def test_a_common_string_takes_bm25s_first_hits_that_hold_it(corpus):
    conn, _info = corpus
    common = holders(conn, "cluster")
    assert len(common) > 10 * 5  # past what the trigram path reads at a limit of 5
    found, plan = stage(conn, "cluster", 5)
    assert len(found) == 5 and set(found) <= common
    assert "Index Scan using chunks_technical_bm25_open" in plan


def test_of_a_common_strings_holders_those_that_hold_the_questions_word_come_first(corpus):
    conn, _info = corpus
    plain = stage(conn, "cluster", 5)[0]
    # a word that only a few of the string's holders use, none of them among its first five
    (word,) = conn.execute(
        """select w.word from exo_private.chunks_technical c,
                  regexp_split_to_table(lower(c.body), '[^a-z]+') w (word)
           where strpos(lower(c.body), 'cluster') > 0 and length(w.word) >= 5
           group by w.word
           having count(distinct c.id) between 1 and 4 and not bool_or(c.id = any(%s))
           order by count(distinct c.id), w.word limit 1""",
        (plain,),
    ).fetchone()
    both = holders(conn, "cluster") & holders(conn, word)
    found, plan = stage(conn, "cluster", 5, f"Which cluster has the {word}?")
    assert set(found[: len(both)]) == both and not both & set(plain)
    assert "Index Scan using chunks_technical_bm25_open" in plan


@pytest.mark.parametrize("pattern", ["clu%ter", "clust_r", "cluster\\"])
def test_like_wildcards_in_the_string_are_letters(corpus, pattern):
    conn, _info = corpus
    assert holders(conn, pattern) == set()
    assert stage(conn, pattern, 30)[0] == []


def test_a_string_without_a_trigram_goes_to_bm25(corpus):
    conn, _info = corpus
    found, plan = stage(conn, "db", 5)
    assert found and set(found) <= holders(conn, "db")
    assert all("never executed" in line for line in plan.splitlines() if "lower_idx" in line), plan
    (bm25,) = [line for line in plan.splitlines() if "Index Scan using chunks_technical_bm25_open" in line]
    assert "never executed" not in bm25, plan
