"""The knowledge graph written straight into a test database: chunked documents with
extraction windows, and merged extractions (what the extraction model would send),
without a model."""

from __future__ import annotations

from dataclasses import dataclass

from psycopg.types.json import Jsonb

MODEL = "test-model"


@dataclass
class Doc:
    id: int
    workspace: str
    windows: list[int]
    chunks: list[int]


def add_document(
    conn, workspace: str, chunks: list[str], windows: list[tuple[int, int]] | None = None
) -> Doc:
    """A chunked document written straight into the ledger: `chunks` joined by blank lines,
    `windows` as (first chunk, last chunk) index pairs (default: one window over all)."""
    source = conn.execute(
        "insert into exo_private.sources (root) values ('test-graph') "
        "on conflict (root) do update set root = excluded.root returning id"
    ).fetchone()[0]
    body = "\n\n".join(chunks)
    doc_id = conn.execute(
        """with p as (select 'doc-' || gen_random_uuid() || '.md' as path)
           insert into exo_private.documents
               (source_id, path, path_bytes, extension, size_bytes, mtime_ns, stage, workspace, band)
           select %s, p.path, convert_to(p.path, 'UTF8'), 'md', %s, 0, 'chunked', %s, 'current' from p
           returning id""",
        (source, len(body), workspace),
    ).fetchone()[0]
    spans, start = [], 0
    for text in chunks:
        spans.append((start, start + len(text)))
        start += len(text) + 2
    chunk_ids = [
        conn.execute(
            """insert into exo_private.chunks (workspace, document_id, ordinal, body, char_start, char_end, band)
               values (%s, %s, %s, %s, %s, %s, 'current') returning id""",
            (workspace, doc_id, i, text, *spans[i]),
        ).fetchone()[0]
        for i, text in enumerate(chunks)
    ]
    window_ids = []
    for i, (first, last) in enumerate(windows or [(0, len(chunks) - 1)]):
        lo, hi = spans[first][0], spans[last][1]
        window_ids.append(
            conn.execute(
                """insert into exo_private.extraction_windows (document_id, workspace, ordinal, body, char_start, char_end)
                   values (%s, %s, %s, %s, %s, %s) returning id""",
                (doc_id, workspace, i, body[lo:hi], lo, hi),
            ).fetchone()[0]
        )
    return Doc(doc_id, workspace, window_ids, chunk_ids)


def generation(conn, workspace: str, model: str = MODEL) -> int:
    return conn.execute("select exo_private.current_generation(%s, %s)", (workspace, model)).fetchone()[0]


def merge(conn, window_id: int, entities: list, relations: list = (), gen: int | None = None) -> dict:
    if gen is None:
        ws = conn.execute("select workspace from exo_private.extraction_windows where id = %s", (window_id,))
        gen = generation(conn, ws.fetchone()[0])
    return conn.execute(
        "select exo_private.merge_extraction(%s, %s, %s, %s)",
        (window_id, gen, Jsonb(list(entities)), Jsonb(list(relations))),
    ).fetchone()[0]


def person(name: str) -> dict:
    return {"name": name, "type": "Person"}


def org(name: str) -> dict:
    return {"name": name, "type": "Org"}


def rel(subject: str, predicate: str, obj: str) -> dict:
    return {"subject": subject, "predicate": predicate, "object": obj}


@dataclass
class WithheldGraph:
    generation: int
    entities: list[int]
    windows: list[tuple[int, int]]  # (document id, window id)
    hidden_windows: set[int]  # the windows over a withheld chunk
    subject_key: str  # the deferred subject's key, which releases them

    def release_cases(self, hidden_entity: int) -> list[tuple[list[str] | None, set[int], list[int]]]:
        """(released keys, the windows a walk may not use then, the entities hidden): every subject
        released, none, the deferred one, and none with an entity hidden too."""
        return [
            (None, set(), []),
            ([], self.hidden_windows, []),
            ([self.subject_key], set(), []),
            ([], self.hidden_windows, [hidden_entity]),
        ]


def withheld_graph(conn, entity_type: str, key_prefix: str) -> WithheldGraph:
    """Thirty entities of `entity_type` in personal (keys `key_prefix` 1..30) and three documents of
    four chunks, a window per chunk and one over the whole document; one chunk of each charged for a
    deferred subject (Walter Rivera), so the windows over it are withheld from a search that does
    not release it."""
    gen = generation(conn, "personal")
    entities = [
        row[0]
        for row in conn.execute(
            """insert into exo_private.entities (workspace, generation, type, canonical_key, name)
               select 'personal', %s, %s, %s || ' ' || i, initcap(%s) || ' ' || i from generate_series(1, 30) i
               returning id""",
            (gen, entity_type, key_prefix, key_prefix),
        )
    ]
    windows = []
    for d in range(3):
        doc = add_document(
            conn, "personal", [f"part {i} of {d}" for i in range(4)], [(i, i) for i in range(4)] + [(0, 3)]
        )
        conn.execute(
            "update exo_private.chunks set charged_subjects = '{Walter Rivera}' where id = %s",
            (doc.chunks[d + 1],),
        )
        windows += [(doc.id, w) for w in doc.windows]
    hidden_windows = {
        row[0]
        for row in conn.execute(
            """select w.id from exo_private.extraction_windows w
               join exo_private.chunks c on c.document_id = w.document_id and c.charged_subjects <> '{}'
                and c.char_start < w.char_end and c.char_end > w.char_start
               where w.workspace = 'personal'"""
        )
    }
    assert 0 < len(hidden_windows) < len(windows)
    key = conn.execute("select exo_private.canonical_key('Walter Rivera')").fetchone()[0]
    return WithheldGraph(gen, entities, windows, hidden_windows, key)


def add_relations(conn, gen: int, rows: list[tuple[int, int, str, int, int]]) -> None:
    """Relation rows (subject id, object id, predicate, document id, window id) of personal written
    straight into the table, a repeated one once."""
    conn.execute(
        """insert into exo_private.relations
               (workspace, generation, subject_id, object_id, predicate_raw, predicate, window_id, document_id)
           select 'personal', %s, s, o, lower(p), p, w, d
           from unnest(%s::bigint[], %s::bigint[], %s::text[], %s::bigint[], %s::bigint[]) x (s, o, p, d, w)
           on conflict do nothing""",
        (gen, *([r[i] for r in rows] for i in range(5))),
    )
