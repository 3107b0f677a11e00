"""Staged retrieval per workspace and the archive fallback (stdlib only).

Part of exo_private.retrieve (plpy/retrieve.py). In each chosen workspace the stages of
retrieval.stages run in order (exact, participant, path, lexical, capsules, graph, semantic) until the workspace
holds per_workspace candidates or enough confident ones; each stage runs the query
exo_private.stage_sql writes for that workspace, prepared once per session. When the archive
is closed by default and nothing in the present bands answers, the search runs again over
every band (the fallback), which never releases deferred material by itself.
"""

import json
import time

from query_analysis import elapsed_ms
from relation_paths import SYMMETRIC, answer_ways, family_pattern, predicate_family, relation_steps
from search import (
    ALL_BANDS,
    COMMON_WORD_CHUNKS,
    MAX_QUERY_CHARS,
    PRESENT_BANDS,
    WorkspacePool,
    coverage,
    cut_at,
    measured_units,
    name_keys,
    named_days,
    named_subjects,
    searched_text,
    stems,
)

# The archive opens for an old passage that holds this many more of the question's words than
# any present candidate (archive_holds_more), looking at BM25's first few archival passages.
ARCHIVE_MARGIN_WORDS = 2
ARCHIVE_PROBE = 5
# BM25's first this many passages for a name a cited line states (value_mentions).
VALUE_MENTIONS = 5
# BM25's first this many passages for the words of a phrase, read for one that holds them all
# (held_together: a passage with every word ranks above those with some).
HELD_TOGETHER_LOOK = 5


class StageSearch:
    """The stages of one search over its chosen workspaces; candidate details fetched once."""

    #: A profile's personal stage (exo_private.kb_personal): {settings, saved: {workspace:
    #: [document ids]}}, set by retrieve when the search has a profile; None: no personal stage.
    personal = None

    def __init__(self, plpy, db, question, chosen, per_workspace, settings, model, embedding, report):
        self.plpy = plpy
        self.db = db
        self.q = question
        self.chosen = chosen
        self.per_workspace = per_workspace
        self.settings = settings
        self.model = model
        self.embedding = embedding
        self.report = report
        self.details = {}
        self.participant_probes = {}  # participant_open's answers, by workspace and bands
        # identifiers of the question that more passages of a workspace hold than a pool needs
        self.common_idents = set()
        self.thresholds = {
            "lexical": settings["retrieval.lexical_confident_score"],
            "semantic": settings["retrieval.semantic_confident_similarity"],
        }

    def sql_text(self, stage, ws, model_id=None, dimensions=None):
        """exo_private.stage_sql's query for a stage in a workspace, asked once per session: the
        one that reads charged chunks too when this search releases any (released)."""
        released = self.q.care.released_keys_of_search() != []
        return self.db.cached(
            ("sql", stage, ws, model_id, dimensions, released),
            lambda: self.db.run(
                "stage_sql",
                "select exo_private.stage_sql($1, $2, $3, $4, $5) as q",
                ["text", "text", "int", "int", "bool"],
                [stage, ws, model_id, dimensions, released],
            )[0]["q"],
        )

    def parameters(self):
        """{stage: [(name, type)]}: exo_private.stage_parameters, read once per session."""

        def read():
            described = {}
            for r in self.db.run(
                "stage_parameters",
                'select stage, name, type from exo_private.stage_parameters() order by stage, "position"',
                [],
                [],
            ):
                described.setdefault(r["stage"], []).append((r["name"], r["type"]))
            return described

        return self.db.cached(("stage_parameters",), read)

    def run_stage(self, stage, ws, bands, values, model=None):
        """One stage's rows in one workspace: its query (sql_text, prepared once per session) with
        the values of its parameters sent by name (exo_private.stage_parameters). bands, as_of,
        row_limit (the per-workspace pool unless values say) and released are every stage's."""
        every = {
            "bands": list(bands),
            "as_of": self.q.as_of_day,
            "row_limit": self.per_workspace,
            "released": self.q.care.released_keys_of_search(),
        }
        values = every | values
        parameters = self.parameters()[stage]
        key = (stage, ws) if model is None else (stage, ws, model["id"], model["dimensions"])
        return self.db.run(
            key,
            self.sql_text(*key),
            [type_ for _name, type_ in parameters],
            [values[name] for name, _type in parameters],
        )

    def rows(self, stage, ws, bands):
        """(rows, skipped_reason) of one stage in one workspace."""
        if stage == "personal":
            return self.personal_rows(ws, bands)
        if stage == "exact":
            return self.exact_rows(ws, bands)
        if stage == "lexical":
            return self.lexical_rows(ws, bands)
        if stage == "capsules":
            return self.capsule_rows(ws, bands)
        if stage == "path":
            return self.path_rows(ws, bands)
        if stage == "graph":
            return self.graph_rows(ws, bands)
        if stage == "participant":
            return self.participant_rows(ws, bands)
        if stage == "semantic":
            return self.semantic_rows(ws, bands)
        self.plpy.error("unknown stage " + repr(stage[:100]) + " in retrieval.stages")

    @staticmethod
    def candidate(r, confident, **more):
        """A stage row as WorkspacePool.admit takes it: {chunk_id, score, confident, charged} and
        `more` (match, detail)."""
        return {
            "chunk_id": r["chunk_id"],
            "score": r["score"],
            "confident": confident,
            "charged": r["charged"],
            **more,
        }

    def exact_rows(self, ws, bands):
        """The exact stage: a document named by title or file name first, then each identifier,
        then the entities of this workspace the query names, then what was written on the day,
        week or month it names (never confident: a day holds more than the answer); a chunk
        keeps the first match found."""
        q = self.q
        entities = q.entities.get(ws)
        days = named_days(q.span)
        if not (q.idents or entities or q.titles or q.files or days):
            return [], "no identifier, entity, title, file name or day in the query"
        rows = []
        if q.titles or q.files:
            for r in self.run_stage("document", ws, bands, {"title_keys": q.titles, "file_names": q.files}):
                rows.append(self.candidate(r, True, match="document", detail="document " + r["detail"]))
        # "GNU/Linux" in more passages than a pool needs confident identifies none of them: the
        # first of them join the pool unconfident, leaving room for the lexical stage, which ranks
        # by all the question's words
        need = min(self.per_workspace, self.settings["retrieval.confident_needed"])
        for ident in q.idents:
            found = self.run_stage(
                "identifier", ws, bands, {"identifier": ident, "query": self.q.words[:MAX_QUERY_CHARS]}
            )
            rare = len(found) <= need
            if not rare:
                self.common_idents.add(ident)
            for r in found if rare else found[:need]:
                rows.append(self.candidate(r, rare, match="identifier", detail="identifier " + ident))
        if entities:
            for r in self.run_stage("entity", ws, bands, {"entity_ids": [e["id"] for e in entities]}):
                rows.append(self.candidate(r, True, match="entity", detail="entity " + r["detail"]))
        if days:
            values = {
                "first_day": q.span["first"],
                "last_day": q.span["last"],
                "query": q.words[:MAX_QUERY_CHARS],
            }
            for r in self.run_stage("dated", ws, bands, values):
                rows.append(self.candidate(r, False, match="dated", detail="written " + r["detail"]))
        return rows, None

    def lexical_rows(self, ws, bands):
        """The lexical stage: BM25 over the query text, confident from retrieval.lexical_confident_score."""
        if not self.q.terms:
            return [], "no searchable words in the query"
        # the units of a measure the question asks of join its words ("data": GB, MB ...)
        query = " ".join([self.q.words[:MAX_QUERY_CHARS], *measured_units(self.q.terms)])
        rows = self.run_stage("lexical", ws, bands, {"query": query})
        return [self.candidate(r, r["score"] >= self.thresholds["lexical"]) for r in rows], None

    def capsule_rows(self, ws, bands):
        """The capsules stage. A capsule points to evidence, never replaces it: the chunks its
        matching lines come from. A stale one serves nothing; the report names it (a withheld one
        never matches)."""
        if not self.q.terms:
            return [], "no searchable words in the query"
        rows = self.run_stage("capsules", ws, bands, {"terms": " or ".join(self.q.terms)})
        seen = self.report.setdefault("capsules", {"served": [], "stale_skipped": []})
        for r in rows:
            key = "served" if r["state"] == "fresh" else "stale_skipped"
            if r["capsule_id"] not in seen[key] and (key != "served" or r["chunk_id"] is not None):
                seen[key].append(r["capsule_id"])
        return [
            self.candidate(r, False, detail="capsule {}".format(r["capsule_id"]))
            for r in rows
            if r["chunk_id"] is not None
        ], None

    def path_rows(self, ws, bands):
        """The path stage: a question that asks for relations ("the daughter-in-law of X", "who
        manages the team that runs X") walks them, typed, from X, and gets the chunks stating each
        hop; the report's paths[ws] says the hops, how many rows and the ways found."""
        entities = self.q.entities.get(ws)
        if not entities:
            return [], "no entity of this workspace's graph named in the query"
        names = [e["name"] for e in entities]
        steps = relation_steps(self.q.text, names)
        if not steps:
            return [], "no relation asked for in the query"
        values = {
            "entity_ids": [e["id"] for e in entities],
            "hop_patterns": [family_pattern(families) for families, _ in steps],
            "per_node": self.settings["retrieval.graph"]["per_node"],
        }
        rows = self.run_stage("path", ws, bands, values)
        ways = self.walk_ways(rows, [end for _, end in steps], names)
        self.report.setdefault("paths", {})[ws] = {
            "hops": [list(families) for families, _ in steps],
            "found": len(rows),
            "ways": ways,
        }
        if ways:
            # The walk goes both ways along every relation; where some way reaches the end each
            # hop asks for ("the mother of the mother of X": never X's grandchild), only the
            # chunks stating its relations are evidence.
            on_way = {c for way in ways for r in way for c in r["chunks"]}
            rows = [r for r in rows if r["chunk_id"] in on_way]
        # The last hop's evidence holds the answer (retrieval.rank_weights.match.path); the
        # hops that lead to it are evidence of the way there.
        return [
            self.candidate(
                r, True, match="path" if r["score"] >= 1 else "path_hop", detail="path " + r["detail"]
            )
            for r in rows
        ], None

    def graph_rows(self, ws, bands):
        """The graph stage: the chunks near the entities the query names (retrieval.graph's depth
        and per_node); never confident."""
        entities = self.q.entities.get(ws)
        if not entities:
            return [], "no entity of this workspace's graph named in the query"
        graph = self.settings["retrieval.graph"]
        values = {
            "entity_ids": [e["id"] for e in entities],
            "depth": graph["depth"],
            "per_node": graph["per_node"],
        }
        rows = self.run_stage("graph", ws, bands, values)
        return [self.candidate(r, False, detail="near " + r["detail"]) for r in rows], None

    def query_vector(self):
        """(the query's embedding, None) for a vector stage, or (None, why it cannot run)."""
        if self.model["id"] is None:
            return None, "no embeddings stored yet"
        vector = self.embedding.vector(self.report)
        if vector is None:
            return None, "query embedding unavailable ({})".format(self.embedding.error["error_class"])
        return vector, None

    def participant_open(self, ws, bands):
        """Whether the participant stage finds a window open to this search in `ws` of a person
        the question names: the stage's own query without the vector (one row, no order), asked
        once per workspace and bands. Where it finds none the stage needs no vector."""
        key = (ws, tuple(bands))
        if key not in self.participant_probes:
            probe = {"query_vector": None, "row_limit": 1, "name_keys": name_keys(self.q.text)}
            self.participant_probes[key] = bool(self.run_stage("participant", ws, bands, probe, self.model))
        return self.participant_probes[key]

    def participant_rows(self, ws, bands):
        """The participant stage: the windows of the people the query names, by similarity. As
        many as a confident pool needs, not the whole room: BM25 and the other stages still look
        everywhere. A window of the person named is where to look, not an answer, so none of them
        counts as confident. The query's vector is asked for only where participant_open finds a
        window."""
        if self.model["id"] is None:
            return [], "no embeddings stored yet"
        if self.participant_open(ws, bands):
            vector, why = self.query_vector()
            if vector is None:
                return [], why
            limit = min(self.per_workspace, self.settings["retrieval.confident_needed"])
            values = {"query_vector": vector, "row_limit": limit, "name_keys": name_keys(self.q.text)}
            rows = self.run_stage("participant", ws, bands, values, self.model)
            return [self.candidate(r, False) for r in rows], None
        # the same whether the question names no one or only people whose windows this search
        # leaves closed: neither the report nor the vector's fetch tells anything withheld
        return [], "no window open to this search of a person the question names"

    def semantic_rows(self, ws, bands):
        """The semantic stage: chunks by similarity from retrieval.semantic_min_similarity,
        confident from retrieval.semantic_confident_similarity."""
        vector, why = self.query_vector()
        if vector is None:
            return [], why
        rows = self.run_stage("semantic", ws, bands, {"query_vector": vector}, self.model)
        low = self.settings["retrieval.semantic_min_similarity"]
        return [
            self.candidate(r, r["score"] >= self.thresholds["semantic"]) for r in rows if r["score"] >= low
        ], None

    def personal_rows(self, ws, bands):
        """The personal stage: the chunks of the user's saved documents in `ws` by similarity to
        the question (kb.similarity_threshold, kb.local_top_k a document), else by shared words
        when there is no query embedding (the report says which). Never confident: the global
        stages still run, and every hit joins the combined-pool rerank."""
        saved = self.personal["saved"].get(ws)
        if not saved:
            return [], "nothing saved in this workspace"
        kb = self.personal["settings"]
        mode = self.report["personal"]
        model = self.model
        text = self.embedding.vector(self.report) if model["id"] is not None else None
        if text is not None:
            values = {
                "query_vector": text,
                "documents": saved,
                "threshold": kb["similarity_threshold"],
                "per_document": kb["local_top_k"],
            }
            rows = self.run_stage("personal", ws, bands, values, model)
            mode["mode"] = "similarity"
            mode["checked"] += saved
        else:
            if not self.q.terms:
                return [], "no query embedding and no searchable words in the query"
            why = "no embeddings stored yet" if model["id"] is None else self.embedding.error["error_class"]
            mode["mode"] = f"keyword (no query embedding: {why})"
            values = {
                "terms": " or ".join(self.q.terms),
                "documents": saved,
                "per_document": kb["local_top_k"],
            }
            rows = self.run_stage("personal_keyword", ws, bands, values)
        mode["hits"] += sorted({int(r["detail"]) for r in rows})
        return [self.candidate(r, False, detail="your base") for r in rows], None

    def only_archival_word(self, pools):
        """Why the archive opens though the present answers: a word the question asks with (three
        letters or more, names included) that no present candidate holds is held by no present
        chunk of any chosen workspace at all, yet by a few archival ones (fewer than
        COMMON_WORD_CHUNKS: a specific word, not chatter), "perthshire" of "Which mountain did John
        climb in Perthshire?" when every recent passage says only "mountain" and "John". Weak
        present matches (a name, common words) no longer hide strong old ones, and a word the
        present uses keeps the search there ("rent" of "How much is my rent?"); None when no word
        is only archival (then only_archival_entity and archive_holds_more decide). BM25 reads as the lexical stage does:
        nothing withheld counts."""
        held = set().union(
            *(stems(searched_text(d)) for d in self.fetch_details([h for p in pools for h in p.hits]))
        )
        for word in [w for w in self.q.terms if len(w) >= 3 and w[:5] not in held]:
            if self.lexical_hits(word, PRESENT_BANDS, 1):
                continue
            old = self.lexical_hits(word, ["archival"], COMMON_WORD_CHUNKS)
            if 0 < old < COMMON_WORD_CHUNKS:
                return f"the question's word {word!r} is only in archival passages ({old})"
        return self.only_archival_entity() or self.archive_holds_more(pools)

    def only_archival_entity(self):
        """Why the archive opens for a person, place or thing the question names (q.entities)
        whose every mention is archival, however many there are and whatever others' passages
        say of the name ("Fiona", who wrote in a chat of 2023, named in a recent one); None when
        the question names none such."""
        released = self.q.care.released_keys_of_search()
        for found in self.q.entities.values():
            for e in found:
                only = self.db.run(
                    "entity_only_archival",
                    "select exo_private.entity_only_archival($1, $2, $3) as only",
                    ["bigint", "text[]", "date"],
                    [e["id"], released, self.q.as_of_day],
                )[0]["only"]
                if only:
                    return f"the question names {e['name']!r}, whose every mention is archival"
        return None

    def archive_holds_more(self, pools):
        """Why the archive opens though the present answers: a passage among BM25's first
        ARCHIVE_PROBE archival ones holds ARCHIVE_MARGIN_WORDS more of the question's words than
        any present candidate, and enough of them to answer (retrieval.answer_coverage): "Audrey",
        "Leeds", "half" and "marathon" in one old message, where every present passage says only
        "half marathon" or "Audrey". None otherwise (a question of one or two words never)."""
        terms = self.q.terms
        if len(terms) <= ARCHIVE_MARGIN_WORDS:
            return None
        present = [d["coverage"] for d in self.fetch_details([h for p in pools for h in p.hits])]
        present_held = round(max(present, default=0.0) * len(terms))
        if present_held + ARCHIVE_MARGIN_WORDS > len(terms):
            return None  # no passage could hold that many more: nothing to look up
        t0 = time.monotonic()
        query = {"query": self.q.words[:MAX_QUERY_CHARS], "row_limit": ARCHIVE_PROBE}
        old_hits = [
            {"workspace": ws, "chunk_id": r["chunk_id"]}
            for ws in self.chosen
            for r in self.run_stage("lexical", ws, ["archival"], query)
        ]
        old = max((d["coverage"] for d in self.fetch_details(old_hits)), default=0.0)
        self.report["timings_ms"]["archive_probe"] = elapsed_ms(t0)
        held = round(old * len(terms))
        if old >= self.settings["retrieval.answer_coverage"] and held - present_held >= ARCHIVE_MARGIN_WORDS:
            return (
                f"an archival passage holds {held} of the question's {len(terms)} words, "
                f"a present one at most {present_held}"
            )
        return None

    def lexical_hits(self, word, bands, cap):
        """How many chunks of the chosen workspaces in `bands` BM25 finds for `word`, up to cap
        a workspace."""
        query = {"query": word, "row_limit": cap}
        return sum(len(self.run_stage("lexical", ws, bands, query)) for ws in self.chosen)

    def value_mentions(self, values, bands, known):
        """Hits of the lexical stage in `bands` for each of `values` (names and quantities the
        packet's lines state), VALUE_MENTIONS a value and workspace, none of `known` chunk ids:
        where a later line may say that the value changed."""
        hits = []
        for ws in self.chosen:
            for value in values:
                for r in self.run_stage("lexical", ws, bands, {"query": value, "row_limit": VALUE_MENTIONS}):
                    if r["chunk_id"] not in known:
                        known.add(r["chunk_id"])
                        hits.append(
                            self.candidate(
                                r, False, workspace=ws, stage="lexical", match="lexical", detail=None
                            )
                        )
        return hits

    def word_uses(self, words, cap):
        """{word: how many chunks of the chosen workspaces hold it in any band, counted up to cap}
        (BM25, as the lexical stage reads: nothing withheld counts)."""
        return {w: min(cap, self.lexical_hits(w, ALL_BANDS, cap)) for w in words}

    def held_together(self, words):
        """Whether one chunk of the chosen workspaces (any band) holds every one of `words` (by
        stems()): BM25's first HELD_TOGETHER_LOOK chunks for the words together, read. BM25 reads
        as the lexical stage does: nothing withheld counts."""
        query = {"query": " ".join(words), "row_limit": HELD_TOGETHER_LOOK}
        hits = [
            self.candidate(r, False, workspace=ws)
            for ws in self.chosen
            for r in self.run_stage("lexical", ws, ALL_BANDS, query)
        ]
        wanted = {w[:5] for w in words}
        return any(wanted <= stems(searched_text(d)) for d in self.fetch_details(hits))

    def walk_ways(self, rows, ends, anchors):
        """The ways a typed walk from `anchors` reached an answer (relation_paths.answer_ways;
        `ends`: the end each hop asks for, relation_steps'),
        each a list of relations {subject, predicate, object, reached: the end the way went to,
        chunks: the path rows' chunks that state it}, a symmetric one said from the end the way
        came from; none with a relation that names a subject deference withholds (its chunk may
        not be charged when the name is in another chunk of the window)."""
        chunks, walked = {}, []
        for r in rows:
            for hops_at, s, p, o in json.loads(r["walked"]):
                chunks.setdefault((s, p, o), set()).add(r["chunk_id"])
                walked.append([hops_at, s, p, o])
        withheld, deferred = self.q.care.withheld, self.q.deferred

        def said(s, p, o, to):
            turn = to == s and (predicate_family(p) or ("",))[0] in SYMMETRIC
            ends = (o, s) if turn else (s, o)
            return {
                "subject": ends[0],
                "predicate": p,
                "object": ends[1],
                "reached": to,
                "chunks": sorted(chunks[(s, p, o)]),
            }

        return [
            [said(*r) for r in way]
            for way in answer_ways(walked, len(ends), anchors, ends=ends)
            if not any(
                withheld(named_subjects(s, deferred) + named_subjects(o, deferred)) for s, _, o, _ in way
            )
        ]

    def workspaces(self, bands):
        """A WorkspacePool per chosen workspace after its stages over `bands`, each stage run or
        skipped (and why) in pool.stages.

        Each workspace runs its stages in order, and the workspaces take turns: first every one
        runs those before its first stage that would wait for the query's vector, then the rest.
        The embeddings endpoint computes the vector meanwhile (QueryEmbedding), so the search waits
        for it once and as late as it can; no workspace's stages or their order change."""
        pools = [
            WorkspacePool(ws, self.per_workspace, self.settings["retrieval.confident_needed"])
            for ws in self.chosen
        ]
        order = (["personal"] if self.personal else []) + list(self.settings["retrieval.stages"])
        done = [0] * len(pools)
        for may_wait in (False, True):
            for i, pool in enumerate(pools):
                while done[i] < len(order) and (
                    may_wait or not self.waits(order[done[i]], pool.workspace, bands)
                ):
                    pool.stages.append(self.stage_entry(pool, order[done[i]], bands))
                    done[i] += 1
        return pools

    def waits(self, stage, ws, bands):
        """Whether the stage would wait in `ws` for a query vector still being computed."""
        if not self.embedding.in_flight():
            return False
        if stage == "participant":
            return self.participant_open(ws, bands)
        return stage in ("semantic", "personal")

    def stage_entry(self, pool, stage, bands):
        """Run one stage in pool's workspace when the pool wants more, admitting its rows: the
        report's entry for it (ran, found, admitted, confident, ms; or skipped and why)."""
        go, why = pool.wants_more()
        entry = {"stage": stage}
        if go:
            t0 = time.monotonic()
            rows, why = self.rows(stage, pool.workspace, bands)
            if why is None:
                entry.update(
                    ran=True,
                    found=len(rows),
                    admitted=pool.admit(stage, rows),
                    confident=pool.confident,
                    ms=elapsed_ms(t0),
                )
                return entry
        entry.update(ran=False, skipped=why)
        return entry

    def fetch_details(self, hits):
        """pool_details rows of hits (with the query's coverage), each fetched once per search, a
        chat window cut at the search's moment (cut_at: one it leaves nothing of is left out)."""
        missing = [h for h in hits if h["chunk_id"] not in self.details]
        if missing:
            for d in self.db.run(
                "details",
                "select * from exo_private.pool_details($1, $2, $3)",
                ["text[]", "bigint[]", "date"],
                [[h["workspace"] for h in missing], [h["chunk_id"] for h in missing], self.q.as_of_day],
            ):
                d = cut_at(d, self.q.moment)
                if d is not None:
                    self.details[d["chunk_id"]] = dict(d, coverage=coverage(searched_text(d), self.q.terms))
        return [self.details[h["chunk_id"]] for h in hits if h["chunk_id"] in self.details]

    def present_answers(self, pools):
        """Whether the present bands answer: an identifier of the query found verbatim when it
        has any, else a confident candidate, or one that covers enough of the query's words
        (BM25 confidence depends on the corpus; a tiny one never reaches it)."""
        if self.q.idents:
            return any(h["match"] == "identifier" for p in pools for h in p.hits)
        if any(p.confident for p in pools):
            return True
        covered = [d["coverage"] for d in self.fetch_details([h for p in pools for h in p.hits])]
        return bool(covered) and max(covered) >= self.settings["retrieval.answer_coverage"]


def search_with_fallback(search, open_archive):
    """(pools, bands, opened): the stages over the bands the question opens; when the archive is
    closed by default (open_archive null, no temporal signal) and nothing present answers, or a
    word, a name or a passage of the archive is clearly stronger (only_archival_word), again over
    every band; `opened` says why the search opened it (None: it did not)."""
    q = search.q
    bands = ALL_BANDS if q.archive_open else PRESENT_BANDS
    pools = search.workspaces(bands)
    if q.archive_open or open_archive is not None:
        return pools, bands, None
    # Recency is a preference, not a wall: weak present matches do not hide strong old ones.
    opened = "nothing in the present bands answered" if not search.present_answers(pools) else None
    opened = opened or search.only_archival_word(pools)
    if opened is None:
        return pools, bands, None
    return search.workspaces(ALL_BANDS), ALL_BANDS, opened
