"""Multi-hop retrieval (issue 16): the question's relation words as a typed path
(plpy/relation_paths.py), the graph stage walking it and citing each hop's chunks, and the
people-and-organisations generator the benchmark asks its questions of."""

from __future__ import annotations

import json
import re

import pytest
from support.db import configure
from support.deferred import defer_walter
from support.graph import add_document, merge, org, person, rel

from exocortex.eval import people_corpus
from exocortex.plpy.relation_paths import (
    answer_ways,
    family_pattern,
    predicate_family,
    relation_steps,
)

# -- relation words and predicate families ----------------------------------------------------


@pytest.mark.parametrize(
    ("question", "anchor", "path"),
    [
        ("Who is the daughter-in-law of Orla Vend?", "Orla Vend", [("PARENT_OF",), ("SPOUSE_OF",)]),
        ("Who manages the team that runs Quiazek, the mail relay?", "Quiazek", [("RUNS",), ("MANAGES",)]),
        ("Which company does the sister of Tam Vend work for?", "Tam Vend", [("SIBLING_OF",), ("WORKS_AT",)]),
        ("Where does Orla Vend live?", "Orla Vend", [("LIVES_IN",)]),
        (
            "Who is the sister-in-law of Tam Vend?",
            "Tam Vend",
            [("SPOUSE_OF", "SIBLING_OF"), ("SPOUSE_OF", "SIBLING_OF")],
        ),
        ("What did Orla Vend say about the weather?", "Orla Vend", []),
        # A relation word inside the name the question gives is part of the name.
        ("Who is the manager of Lead Systems?", "Lead Systems", [("MANAGES",)]),
        # A possessive binds to its name first, whatever stands before the name.
        ("Who is the wife of Tam Vend's brother?", "Tam Vend", [("SIBLING_OF",), ("SPOUSE_OF",)]),
        ("Which company employs Orla Vend's daughter?", "Orla Vend", [("PARENT_OF",), ("WORKS_AT",)]),
        (
            "Where does the husband of Orla Vend’s younger sister live?",
            "Orla Vend",
            [("SIBLING_OF",), ("SPOUSE_OF",), ("LIVES_IN",)],
        ),
        # four hops: a possessive chain, then the "of" phrase, then the verb
        (
            "Who does the father of Tam Vend's wife's brother work for?",
            "Tam Vend",
            [("SPOUSE_OF",), ("SIBLING_OF",), ("PARENT_OF",), ("WORKS_AT",)],
        ),
        # a possessive of something that is no relation ends the chain
        ("Where is Orla Vend's car?", "Orla Vend", []),
    ],
)
def test_relation_words_give_the_hops_nearest_the_named_entity_first(question, anchor, path):
    assert [families for families, _ in relation_steps(question, [anchor])] == path


@pytest.mark.parametrize(
    ("question", "steps"),
    [
        # the same kinship word twice is two hops, each to the parent
        ("Who is the mother of the mother of Tam Vend?", [(("PARENT_OF",), "subject")] * 2),
        ("Who is Tam Vend's grandson?", [(("PARENT_OF",), "object")] * 2),
        ("Who is the aunt of Tam Vend?", [(("PARENT_OF",), "subject"), (("SIBLING_OF",), None)]),
        # a noun and a verb of one relation are one hop
        ("Who is the employer Tam Vend works for?", [(("WORKS_AT",), None)]),
    ],
)
def test_a_kinship_word_names_the_end_of_its_hop(question, steps):
    assert relation_steps(question, ["Tam Vend"]) == steps


def test_a_way_reaches_the_end_each_hop_asks_for():
    walked = [
        [[1], "Ada", "PARENT_OF", "Bo"],  # Bo's mother
        [[1], "Bo", "PARENT_OF", "Cy"],  # Bo's child
        [[2], "Zoe", "MOTHER_OF", "Ada"],  # Ada's mother
        [[2], "Cy", "HAS_DAUGHTER", "Di"],  # Cy's daughter, stated the other way round
        [[2], "Cy", "SON_OF", "Bo"],
    ]
    up, down = "subject", "object"
    assert answer_ways(walked, 2, ["Bo"], ends=[up, up]) == [
        [("Ada", "PARENT_OF", "Bo", "Ada"), ("Zoe", "MOTHER_OF", "Ada", "Zoe")]
    ]
    assert answer_ways(walked, 2, ["Bo"], ends=[down, down]) == [
        [("Bo", "PARENT_OF", "Cy", "Cy"), ("Cy", "HAS_DAUGHTER", "Di", "Di")]
    ]
    assert len(answer_ways(walked, 2, ["Bo"])) == 2  # no ends asked: both


@pytest.mark.parametrize(
    ("predicate", "family"),
    [
        ("MOTHER_OF", ("PARENT_OF", False)),
        ("DAUGHTER_OF", ("PARENT_OF", True)),
        ("HAS_DAUGHTER", ("PARENT_OF", False)),
        ("IS_MARRIED_TO", ("SPOUSE_OF", False)),
        ("MANAGED_BY", ("MANAGES", True)),
        ("WORKS_FOR", ("WORKS_AT", False)),
        ("EMPLOYS", ("WORKS_AT", True)),
        ("TALKED_WITH", None),
    ],
)
def test_a_predicate_belongs_to_a_family_in_a_direction(predicate, family):
    assert predicate_family(predicate) == family


def test_a_family_pattern_matches_its_predicates_as_whole_words():
    pattern = re.compile(family_pattern(["PARENT_OF"]))
    assert pattern.search("MOTHER_OF") and pattern.search("HAS_CHILD") and pattern.search("SON")
    assert not pattern.search("PARENTHESIS_OF") and not pattern.search("MARRIED_TO")


def test_the_ways_to_an_answer_go_level_by_level_from_the_anchor():
    walked = [
        [[1], "Orla", "PARENT_OF", "Tam"],
        [[1], "Orla", "PARENT_OF", "Ivo"],  # a child with no spouse: leads nowhere
        [[2], "Tam", "SPOUSE_OF", "Pim"],
        [[2], "Pim", "SPOUSE_OF", "Tam"],  # the same marriage stated the other way round
        [[2], "Ned", "SPOUSE_OF", "Uma"],  # reached some other way: no way from Orla to it
    ]
    assert answer_ways(walked, 2, ["Orla"]) == [
        [("Orla", "PARENT_OF", "Tam", "Tam"), ("Pim", "SPOUSE_OF", "Tam", "Pim")],
        [("Orla", "PARENT_OF", "Tam", "Tam"), ("Tam", "SPOUSE_OF", "Pim", "Pim")],
    ]
    assert answer_ways(walked, 3, ["Orla"]) == []  # no relation of a third hop: no answer
    assert answer_ways(walked, 2, ["Ned"]) == []
    # The sister of a sister is a sister, no sister-in-law: a way never ends nearer than its hop.
    siblings = [
        [[1, 2], "Ana", "SIBLING_OF", "Bea"],
        [[1, 2], "Ana", "SIBLING_OF", "Cy"],
        [[2], "Bea", "SIBLING_OF", "Cy"],
    ]
    married = [[[1, 2], "Bea", "SPOUSE_OF", "Dan"]]
    assert answer_ways(siblings + married, 2, ["Ana"]) == [
        [("Ana", "SIBLING_OF", "Bea", "Bea"), ("Bea", "SPOUSE_OF", "Dan", "Dan")]
    ]
    assert len(answer_ways([[[1], "A", "P", f"B{i}"] for i in range(30)], 1, ["A"])) == 20


# -- the graph stage ----------------------------------------------------------------------------


def _report_and_rows(conn, query: str) -> tuple[dict, list[dict]]:
    found = conn.execute("select exo.search_json(%s, array['personal'])", (query,)).fetchone()[0]
    return found["report"], found["results"]


@pytest.fixture
def family(db):
    """A small graph: Orla is Tam's mother, Tam married Pim (a structural edge); Orla works with
    Dex, who married Suki (a path of the wrong first hop); filler notes name nobody."""
    with db.connect() as conn:
        docs = {
            "parent": add_document(conn, "personal", ["Orla Vend is the mother of Tam Vend."]),
            "spouse": add_document(conn, "personal", ["Tam Vend married Pim Quell in May."]),
            "colleague": add_document(conn, "personal", ["Orla Vend works with Dex Harl at Brask Labs."]),
            "other": add_document(conn, "personal", ["Dex Harl is married to Suki Marr."]),
        }
        for i in range(5):
            add_document(conn, "personal", [f"Filler note {i} about the garden and the weather."])
        merge(
            conn,
            docs["parent"].windows[0],
            [person("Orla Vend"), person("Tam Vend")],
            [rel("Orla Vend", "mother of", "Tam Vend")],
        )
        merge(
            conn,
            docs["spouse"].windows[0],
            [person("Tam Vend"), person("Pim Quell")],
            [rel("Tam Vend", "married", "Pim Quell")],
        )
        merge(
            conn,
            docs["colleague"].windows[0],
            [person("Orla Vend"), person("Dex Harl"), org("Brask Labs")],
            [rel("Orla Vend", "works with", "Dex Harl")],
        )
        merge(
            conn,
            docs["other"].windows[0],
            [person("Dex Harl"), person("Suki Marr")],
            [rel("Dex Harl", "married to", "Suki Marr")],
        )
        # Both origins are walked: the marriage is known from structure here.
        conn.execute(
            "update exo_private.relations set origin = 'structure' where document_id = %s",
            (docs["spouse"].id,),
        )
    configure(db, retrieval__stages=["path", "graph"])
    return docs


def test_the_path_stage_follows_a_typed_two_hop_path_and_cites_each_hop(db, family):
    configure(db, retrieval__stages=["path"])
    with db.connect("exo_reader") as conn:
        found, rows = _report_and_rows(conn, "Who is the daughter-in-law of Orla Vend?")
        packet = conn.execute(
            "select exo.context_packet_json(%s, workspaces => array['personal'])",
            ("Who is the daughter-in-law of Orla Vend?",),
        ).fetchone()[0]
    walk = found["paths"]["personal"]
    assert (walk["hops"], walk["found"]) == ([["PARENT_OF"], ["SPOUSE_OF"]], 2)
    assert [[(r["subject"], r["object"], r["chunks"]) for r in way] for way in walk["ways"]] == [
        [
            ("Orla Vend", "Tam Vend", [family["parent"].chunks[0]]),
            ("Tam Vend", "Pim Quell", [family["spouse"].chunks[0]]),
        ]
    ]
    cited = {r["chunk_id"]: r for r in rows}
    assert set(cited) == {family["parent"].chunks[0], family["spouse"].chunks[0]}
    assert all(r["stage"] == "path" for r in rows)
    # Both hops' chunks are in the packet, and nothing of the path not taken.
    assert "Pim Quell" in packet["text"] and "mother of Tam Vend" in packet["text"]
    assert "Suki Marr" not in packet["text"] and "Dex Harl" not in packet["text"]


@pytest.mark.parametrize(
    "question", ["Who is Orla Vend's daughter-in-law?", "Who is the wife of Orla Vend\u2019s son?"]
)
def test_a_possessive_names_the_entity_and_its_chain_comes_first(db, family, question):
    configure(db, retrieval__stages=["path"])
    with db.connect("exo_reader") as conn:
        found, rows = _report_and_rows(conn, question)
    assert found["recognised"]["entities"] == {"personal": ["Orla Vend"]}
    walk = found["paths"]["personal"]
    assert walk["hops"] == [["PARENT_OF"], ["SPOUSE_OF"]]
    assert [[r["object"] for r in way] for way in walk["ways"]] == [["Tam Vend", "Pim Quell"]]
    assert {r["chunk_id"] for r in rows} == {family["parent"].chunks[0], family["spouse"].chunks[0]}


def test_the_packet_states_the_walk_before_its_evidence_at_any_budget(db, family):
    configure(db, retrieval__stages=["path"])
    question = "Who is the daughter-in-law of Orla Vend?"
    with db.connect("exo_reader") as conn:
        roomy, small = (
            conn.execute(
                "select exo.context_packet_json(%s, %s, workspaces => array['personal'])", (question, budget)
            ).fetchone()[0]
            for budget in (1000, 200)
        )
    for packet in (roomy, small):
        section = packet["text"].split("## Relations", 1)[1].split("\n\n", 1)[0]
        assert "Orla Vend" in section and "Tam Vend" in section and "Pim Quell" in section
        chunks = sorted([family["parent"].chunks[0], family["spouse"].chunks[0]])
        assert "Vend MOTHER_OF Tam Vend; Tam Vend MARRIED Pim Quell (chunk {}, {})".format(*chunks) in section
        assert [[(r["subject"], r["object"]) for r in way["relations"]] for way in packet["relations"]] == [
            [("Orla Vend", "Tam Vend"), ("Tam Vend", "Pim Quell")]
        ]
        assert packet["tokens"] <= packet["budget"]
        assert packet["text"].index("## Relations") < packet["text"].index("## Evidence")


def test_a_relation_naming_a_deferred_subject_stays_out_of_the_packet(db, family):
    with db.connect() as conn:
        doc = add_document(conn, "personal", ["Pim Quell is close to her grandfather."])
        merge(
            conn,
            doc.windows[0],
            [person("Pim Quell"), person("Walter Rivera")],
            [rel("Pim Quell", "married", "Walter Rivera")],
        )
        defer_walter(conn)
    configure(db, retrieval__stages=["path"])
    with db.connect("exo_reader") as conn:
        packet = conn.execute(
            "select exo.context_packet_json(%s, workspaces => array['personal'])",
            ("Who is the daughter-in-law of Orla Vend?",),
        ).fetchone()[0]
    assert "Walter" not in json.dumps(packet)
    assert [[r["object"] for r in way["relations"]] for way in packet["relations"]] == [
        ["Tam Vend", "Pim Quell"]
    ]


def test_a_question_without_relation_words_gets_the_neighbourhood(db, family):
    with db.connect("exo_reader") as conn:
        found, rows = _report_and_rows(conn, "Tell me about Orla Vend")
    assert "paths" not in found
    stages = {s["stage"]: s for s in found["workspaces"]["personal"]["stages"]}
    assert stages["path"] == {"stage": "path", "ran": False, "skipped": "no relation asked for in the query"}
    # Neighbours of Orla: Tam and Dex (depth 1), Pim and Suki (depth 2), by their mentions.
    bodies = " ".join(r["body"] for r in rows)
    assert "Suki Marr" in bodies and "Pim Quell" in bodies


def test_a_path_the_graph_lacks_leaves_the_neighbourhood_to_the_graph_stage(db, family):
    with db.connect("exo_reader") as conn:
        found, rows = _report_and_rows(conn, "Who is the grandson of Pim Quell?")
    assert found["paths"]["personal"]["found"] == 0
    assert rows and all(r["stage"] == "graph" for r in rows)


# -- the generator ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("people")
    world = people_corpus.generate(size=3, seed=5)
    people_corpus.write(world, out)
    return out


def test_the_generator_is_deterministic_for_a_seed(corpus, tmp_path):
    people_corpus.write(people_corpus.generate(size=3, seed=5), tmp_path)
    files = sorted(p.relative_to(corpus) for p in corpus.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert all((corpus / f).read_bytes() == (tmp_path / f).read_bytes() for f in files)
    other = people_corpus.generate(size=3, seed=6)
    assert people_corpus.ground_truth(other) != json.loads((corpus / people_corpus.GROUND_TRUTH).read_text())


def _text(corpus, path: str) -> str:
    target = corpus / path if path == people_corpus.CHATS else corpus / "corpus" / path
    text = target.read_text(encoding="utf-8")
    if path.endswith(".eml"):  # the body may be quoted-printable: read it as a mail reader does
        import email
        import email.policy

        message = email.message_from_string(text, policy=email.policy.default)
        text = str(message["from"]) + str(message["to"]) + message.get_body(("plain",)).get_content()
    return text


def test_the_ground_truth_matches_its_files(corpus):
    truth = json.loads((corpus / people_corpus.GROUND_TRUTH).read_text())
    entities = {e["name"]: e for e in truth["entities"]}
    kinds = {e["type"] for e in truth["entities"]}
    assert {"Person", "Org", "Place", "Topic"} <= kinds
    families = {r["predicate"] for r in truth["relations"]}
    assert set(people_corpus.PERSON_FAMILIES) <= families and {"MANAGES", "RUNS", "WORKS_AT"} <= families
    for r in truth["relations"]:
        assert r["files"], r
        for path in r["files"]:
            text = _text(corpus, path)
            for end in (r["subject"], r["object"]):
                short = end.split()[0] if entities[end]["type"] == "Person" else end
                assert re.search(rf"\b{re.escape(short)}\b", text), (end, path)
    questions = [json.loads(line) for line in (corpus / people_corpus.QUESTIONS).read_text().splitlines()]
    assert len({q["question"] for q in questions}) == len(questions) >= 10
    for q in questions:
        assert len(q["hops"]) == 2 and q["answer"] in q["aliases"]
        ends = {q["hops"][1]["subject"], q["hops"][1]["object"]}
        assert q["answer"] in ends and all(h["files"] for h in q["hops"])
        if q["kind"] == "two-hop":
            assert q["anchor"] in q["question"]


def test_the_path_stage_runs_before_bm25_and_ranks_like_an_exact_match(db):
    with db.connect() as conn:
        stages, weights = (
            conn.execute("select value from exo_private.settings where key = %s", (key,)).fetchone()[0]
            for key in ("retrieval.stages", "retrieval.rank_weights")
        )
    assert stages.index("path") == stages.index("lexical") - 1
    assert weights["stage"]["path"] == weights["stage"]["exact"] and weights["match"]["path"] > 1
