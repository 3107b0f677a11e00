"""`exo eval extraction`'s scoring against a ground truth, on a graph written by hand (no model)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.graph import add_document, generation

from exocortex.cli import main
from exocortex.eval import people_corpus
from exocortex.eval.ground_truth import EvalProblem, Truth, evaluate, score
from exocortex.plpy.textnorm import canonical_key

ENTITIES = {
    "Orla Vend": "Person",
    "Tam Vend": "Person",
    "Pim Quell": "Person",
    "Brask Labs": "Org",
    "Kestrin Team": "Org",
}
STATED = [
    ("PARENT_OF", "Orla Vend", "Tam Vend"),
    ("SPOUSE_OF", "Tam Vend", "Pim Quell"),
    ("WORKS_AT", "Tam Vend", "Brask Labs"),
    ("MANAGES", "Orla Vend", "Kestrin Team"),
]


def _graph(conn, entities: list[tuple[str, str]], relations: list[tuple[str, str, str, str]]) -> None:
    """Entities (name, type) and relations (subject, predicate, object, origin) of one window."""
    doc = add_document(conn, "personal", ["Orla, Tam, Pim, Brask Labs and the Kestrin Team."])
    gen = generation(conn, "personal")
    ids = {}
    for name, kind in entities:
        ids[name] = conn.execute(
            """insert into exo_private.entities (workspace, generation, type, canonical_key, name)
               values ('personal', %s, %s, %s, %s) returning id""",
            (gen, kind, canonical_key(name), name),
        ).fetchone()[0]
    for s, predicate, o, origin in relations:
        conn.execute(
            """insert into exo_private.relations (workspace, generation, subject_id, object_id, predicate_raw,
                                                  predicate, window_id, document_id, origin)
               values ('personal', %s, %s, %s, %s, exo_private.normalise_predicate(%s), %s, %s, %s)""",
            (gen, ids[s], ids[o], predicate, predicate, doc.windows[0], doc.id, origin),
        )


def test_a_hand_made_graph_is_scored_by_family_direction_and_resolved_ends(db):
    truth = Truth.build("Sam Owner", ENTITIES, STATED)
    with db.connect() as conn:
        _graph(
            conn,
            [("Tam", "Person"), ("Orla Vend", "Person"), ("Pim Quell", "Person"), ("Tam Vend", "Person"),
             ("the Brask Labs", "Person"), ("Mystery Person", "Person")],
            [
                ("Tam", "daughter of", "Orla Vend", "model"),  # PARENT_OF, turned round; a first name
                ("Pim Quell", "married", "Tam Vend", "structure"),  # symmetric, either way round
                ("Tam Vend", "works at", "the Brask Labs", "model"),  # a leading "the"
                ("Orla Vend", "sister of", "Pim Quell", "model"),  # a wrong family
                ("Orla Vend", "mother of", "Pim Quell", "model"),  # a right family, wrong ends
                ("Orla Vend", "likes", "Pim Quell", "model"),  # no family
                ("Orla Vend", "mother of", "Mystery Person", "model"),  # no such entity
            ],
        )  # fmt: skip
        got = score(conn, truth)
    assert got.relations == 7 and got.by_origin == {"model": 6, "structure": 1}
    assert (got.scored, got.correct, got.unscored) == (5, 3, 2)
    assert (got.stated, got.found) == (4, 3)
    assert (got.precision, got.recall) == (0.6, 0.75)
    # Person to person: PARENT_OF (right), SPOUSE_OF (right), SIBLING_OF and PARENT_OF (wrong).
    assert (got.person_scored, got.person_correct, got.person_stated, got.person_found) == (4, 2, 2, 2)
    assert (got.person_precision, got.person_recall) == (0.5, 1.0)
    # Five entities resolve (Tam by a first name only Tam Vend has); "the Brask Labs" is no Person.
    assert (got.entities_matched, got.entities_typed_right) == (5, 4)
    assert got.type_accuracy == 0.8


def test_a_relation_stated_twice_counts_once(db):
    truth = Truth.build("Sam Owner", ENTITIES, STATED)
    with db.connect() as conn:
        _graph(
            conn,
            [("Tam Vend", "Person"), ("Pim Quell", "Person")],
            [("Tam Vend", "married to", "Pim Quell", "model"), ("Pim Quell", "wife of", "Tam Vend", "model")],
        )
        got = score(conn, truth)
    assert (got.scored, got.correct, got.found, got.precision) == (1, 1, 1, 1.0)


def test_a_shared_first_name_resolves_to_nobody():
    truth = Truth.build("Sam Owner", {"Tam Vend": "Person", "Tam Quell": "Person"}, [])
    assert truth.resolve("tam") is None and truth.resolve("tam quell") == "Tam Quell"


def test_the_command_names_what_is_wrong_with_its_corpus(tmp_path):
    result = CliRunner().invoke(main, ["eval", "extraction", str(tmp_path)])
    assert result.exit_code == 1 and "corpus/ folder" in result.output
    (tmp_path / "corpus").mkdir()
    (tmp_path / "ground_truth.json").write_text(json.dumps({"entities": []}))
    result = CliRunner().invoke(main, ["eval", "extraction", str(tmp_path), "--configuration", "model"])
    assert result.exit_code == 1 and "not a ground truth file" in result.output
    with pytest.raises(EvalProblem, match="ground_truth.json not found"):
        Truth.load(tmp_path / "nowhere")


def test_the_patterns_configuration_runs_without_a_chat_model(cfg, tmp_path):
    world = people_corpus.generate(3, 16)
    people_corpus.write(world, tmp_path)
    (result,) = evaluate(cfg, tmp_path, ["patterns"], progress=lambda _: None)
    assert result.skipped is None and result.settings["models.chat"] is None
    assert result.settings["extraction.patterns"] is True and result.settings["graph.structural"] is False
    s = result.scores
    assert result.windows > 0 and s.by_origin == {"model": s.relations}  # the worker's rows, no structure
    # Every relation the pass states is a ground-truth one; it finds some of each kind.
    assert s.precision == 1.0 and s.person_precision == 1.0
    assert s.person_found > 0 and s.found > s.person_found
