"""Nothing answers a question whose words the memory uses when no sentence of the documents a
packet would show comes near it in meaning (packet.answer_far_sentence_similarity, migration
0111): notes on gzip and tar share "replace", "name", "file" and "folder" with a question about
editing text, and none of their sentences says how. Nor does anything answer a question about
what no note names ("Does zlib use the Deflate algorithm?"), however near its other words come.

One database for the module: two notes ingested and embedded by the real MiniLM; the questions
are asked as exo_reader.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.db import Database, configure
from support.memory import embedded_memory

NOTES = {
    "gzip.md": "gzip compresses files with the Deflate algorithm. To compress a file, run gzip followed "
    "by its name; the original file is replaced by one ending in .gz. To decompress a file, run gunzip "
    "or gzip -d with its name. The compression level goes from 1, the fastest, to 9, the smallest; the "
    "default is 6.\n",
    "tar.md": "tar bundles many files into one archive without compressing them. Create an archive with "
    "tar -cf archive.tar followed by the folders to put in it. Add -z to compress the archive with gzip "
    "as it is written. List the files an archive holds with tar -tf and the archive's name.\n",
}
# Every word used by the notes (replaced, name, file, folders), none of their sentences near it
ELSEWHERE = "How do I replace a name in every file of a folder?"


@pytest.fixture(scope="module")
def corpus(cfg, template_db, real_models) -> Iterator[Database]:
    with embedded_memory(
        cfg, template_db, real_models.embeddings.url, "exo_nearest", notes=NOTES, workspace="technical"
    ) as db:
        yield db


def answer(reader, query: str) -> dict:
    report = reader.execute("select exo.search_json(%s)", (query,)).fetchone()[0]["report"]
    return dict(report["answer"], embed_sentences="embed_sentences" in report["timings_ms"])


def test_a_question_no_sentence_comes_near_is_answered_by_nothing(reader):
    far = answer(reader, ELSEWHERE)
    assert far["found"] is False and far["embed_sentences"]
    assert far["why"] == "no sentence of the passages comes within 0.45 of the question in meaning"
    assert far["nearest_sentence"] < 0.45
    packet = reader.execute("select exo.context_packet(%s)", (ELSEWHERE,)).fetchone()[0]
    assert "Nothing in the memory answers this question" in packet


def test_a_question_a_sentence_answers_is_answered(reader):
    for question in ("How do I decompress a gzip file?", "How do I see which files a tar archive holds?"):
        found = answer(reader, question)
        assert found["found"] is True, (question, found)


def test_the_rule_decides_and_the_setting_turns_it_off(corpus, reader):
    configure(corpus, **{"packet.answer_far_sentence_similarity": 0})
    try:
        off = answer(reader, ELSEWHERE)
        assert (off["found"], off["why"], off["embed_sentences"]) == (
            True,
            "the memory uses the question's words",
            False,
        )
    finally:
        configure(corpus, **{"packet.answer_far_sentence_similarity": 0.45})


def test_a_question_about_what_no_note_names_is_answered_by_nothing_however_near_its_words(reader):
    """The subject of an inverted question ("zlib") that no passage uses: the gzip note's sentence
    on Deflate is as near in meaning as one about zlib would be."""
    other = answer(reader, "Does zlib use the Deflate algorithm?")
    assert other["found"] is False
    assert other["why"] == "no passage open to this search uses 'zlib', what the question is about"
    assert answer(reader, "Does gzip use the Deflate algorithm?")["found"] is True
    packet = reader.execute(
        "select exo.context_packet(%s)", ("Can zlib compress a file with the Deflate algorithm?",)
    ).fetchone()[0]
    assert "Nothing in the memory answers this question (no passage open to this search uses 'zlib'" in packet
