"""`exo eval shadow`: the compiled path against plain RAG on a file of questions with known answers.

Each question runs three ways with the same k and, where it says so, the same day and workspaces:

  packet  exo.context_packet_json as exo_reader, as an agent would ask (its own tokens)
  vector  the k chunks nearest the question by exact cosine over every stored chunk vector
  bm25    the k best chunks by BM25 (pg_textsearch, each workspace's lexical index, merged by score)

The baselines are plain RAG: they run as the admin, over every chunk (no bands, no deference),
and their context is the returned chunk bodies, about one token per four characters. The
question is embedded once through the models.embeddings endpoint; the packet gets the same
vector, so both semantic paths see one embedding. With `as_of`, the baselines see only chunks
written by that day (the corpus as it was then) and the packet is asked as of it.

Scoring is deterministic string matching, case-insensitive and blind to runs of white space:

- answer: the context holds every (or any) `expect` string;
- stale: a `stale` string is given as current when an evidence item holds it and no `expect`
  string (an item that holds both states the change). A baseline's chunks carry no dates, so
  any such chunk counts. The packet dates its evidence, so such a block is excused when a block
  dated the same day or later holds an expected string, or the text before its first block (its
  current facts: what it states as current) does; a stale string in that text always counts (a
  capsule is a block, dated by its document);
- withheld: a `withheld` string (deferred material) anywhere in the context is a leak;
- sources: the expected documents among those the context cites (packet) or returns (baselines);
- answered: every expected string held, nothing stale as current, nothing leaked.

A question file has one JSON object a line: {"question", "expect": [...], "stale": [...],
"sources": [...], "withheld": [...], "as_of": "YYYY-MM-DD", "workspaces": [...], "kind": "..."};
only question and expect are required.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path

import psycopg
from psycopg import sql
from rich.markup import escape
from rich.table import Table

from exocortex.plpy import model_client as client

METHODS = ("packet", "vector", "bm25")
FIELDS = ("question", "expect", "stale", "sources", "withheld", "as_of", "workspaces", "kind")
LISTS = ("expect", "stale", "sources", "withheld", "workspaces")


class ShadowProblem(Exception):
    """The evaluation cannot run: a bad questions file, a database without chunks, an unknown
    workspace."""


# -- questions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    question: str
    expect: tuple[str, ...]
    stale: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    withheld: tuple[str, ...] = ()
    as_of: date | None = None
    workspaces: tuple[str, ...] | None = None
    kind: str = ""


def parse_question(data: object, where: str) -> Question:
    """One question from a decoded JSON line; ShadowProblem naming `where` and the field."""
    if not isinstance(data, dict):
        raise ShadowProblem(f"{where}: a question must be a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise ShadowProblem(f"{where}: unknown field(s) {', '.join(unknown)}; expected {', '.join(FIELDS)}")
    text = data.get("question")
    if not isinstance(text, str) or not text.strip():
        raise ShadowProblem(f"{where}: question must be a non-empty string")
    lists: dict[str, tuple[str, ...]] = {}
    for name in LISTS:
        value = data.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise ShadowProblem(f"{where}: {name} must be a list of non-empty strings")
        lists[name] = tuple(v.strip() for v in value)
    if not lists["expect"]:
        raise ShadowProblem(f"{where}: expect must name at least one answer string")
    as_of = data.get("as_of")
    if as_of is not None:
        try:
            as_of = date.fromisoformat(as_of) if isinstance(as_of, str) else None
        except ValueError:
            as_of = None
        if as_of is None:
            raise ShadowProblem(f"{where}: as_of must be a day as YYYY-MM-DD, got {data['as_of']!r}")
    kind = data.get("kind", "")
    if not isinstance(kind, str):
        raise ShadowProblem(f"{where}: kind must be a string")
    return Question(
        text.strip(),
        lists["expect"],
        lists["stale"],
        lists["sources"],
        lists["withheld"],
        as_of,
        lists["workspaces"] or None,
        kind,
    )


def load_questions(path: Path) -> list[Question]:
    """The questions of a JSON-lines file (blank lines skipped); ShadowProblem naming the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ShadowProblem(f"cannot read {path}: {exc}") from None
    questions = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ShadowProblem(f"{path.name}:{number}: not JSON ({exc.msg})") from None
        questions.append(parse_question(data, f"{path.name}:{number}"))
    if not questions:
        raise ShadowProblem(f"{path.name}: no questions")
    return questions


# -- scoring (plain functions of the contexts) ---------------------------------------------


@dataclass(frozen=True)
class Item:
    """One piece of evidence in a context: a chunk, a packet block, or the packet's preamble."""

    text: str
    written_at: date | None = None
    current: bool = False
    """Stated as current (the packet's facts and capsules before its evidence), not dated."""


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def holds(text: str, needle: str) -> bool:
    """Whether text holds needle, case-insensitive and blind to runs of white space."""
    return _fold(needle) in _fold(text)


def stale_as_current(q: Question, items: Sequence[Item], dated: bool) -> list[str]:
    """The stale strings a context gives as current (see the module's docstring)."""
    answers = [any(holds(i.text, e) for e in q.expect) for i in items]
    days = [
        date.max if i.current else i.written_at
        for i, answer in zip(items, answers, strict=True)
        if answer and (i.current or i.written_at)
    ]
    flagged = []
    for s in q.stale:
        for item, answer in zip(items, answers, strict=True):
            if answer or not holds(item.text, s):
                continue
            excused = (
                dated
                and not item.current
                and item.written_at is not None
                and any(d >= item.written_at for d in days)
            )
            if not excused:
                flagged.append(s)
                break
    return flagged


def source_cited(path: str, source: str) -> bool:
    """Whether a document path is an expected source: the same path, one ending in it, or one in
    the folder it names (chat/whatsapp: any window of a WhatsApp conversation)."""
    return path == source or path.endswith("/" + source) or path.startswith(source.rstrip("/") + "/")


@dataclass
class Outcome:
    """One context's score for one question."""

    tokens: int = 0
    ms: float = 0.0
    answers: list[str] = field(default_factory=list)
    every: bool = False
    any: bool = False
    stale: list[str] = field(default_factory=list)
    leaked: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    returned: int = 0
    """Chunks returned (baselines) or cited (packet)."""
    unavailable: str | None = None
    """Why this context could not be built (the embedding endpoint down, no vectors)."""

    @property
    def answered(self) -> bool:
        return self.unavailable is None and self.every and not self.stale and not self.leaked

    def to_json(self) -> dict:
        if self.unavailable:
            return {"unavailable": self.unavailable}
        return {
            "answered": self.answered,
            "every_answer": self.every,
            "any_answer": self.any,
            "answers_found": self.answers,
            "stale_as_current": self.stale,
            "leaked": self.leaked,
            "sources_found": self.sources,
            "returned": self.returned,
            "tokens": self.tokens,
            "ms": round(self.ms, 1),
        }


def score(
    q: Question, text: str, items: Sequence[Item], paths: Sequence[str], tokens: int, ms: float, dated: bool
) -> Outcome:
    """Score one context: its whole text, its evidence items and the document paths it cites."""
    found = [e for e in q.expect if holds(text, e)]
    return Outcome(
        tokens=tokens,
        ms=ms,
        answers=found,
        every=len(found) == len(q.expect),
        any=bool(found),
        stale=stale_as_current(q, items, dated),
        leaked=[w for w in q.withheld if holds(text, w)],
        sources=[s for s in q.sources if any(source_cited(p, s) for p in paths)],
        returned=len(paths),
    )


def estimate_tokens(text: str) -> int:
    """About one token per four characters, rounded up (as the packet counts)."""
    return (len(text) + 3) // 4


def packet_items(packet: dict) -> list[Item]:
    """The packet's evidence: its text before the first cited block (its facts; the title line
    left out) as one item stated as current, then one item per block, each dated: an excerpt by
    its written_at, a capsule by its document's excerpt (undated when none is cited). A packet
    whose blocks cannot be found is one undated item."""
    text = packet["text"]
    used = packet.get("used") or []
    day_of = {u.get("document_id"): u.get("written_at") for u in used}
    heads = [(f"[{n}] {u['citation']}\n", u.get("written_at")) for n, u in enumerate(used, 1)]
    heads += [
        (f"[{k['n']}] summary of {k['citation']}", day_of.get(k.get("document_id")))
        for k in packet.get("capsules") or []
    ]
    blocks = []
    for head, day in heads:
        at = text.find(head)
        if at < 0:
            return [Item(text)]
        blocks.append((at, date.fromisoformat(day) if day else None))
    blocks.sort(key=lambda b: b[0])
    evidence = text.find("\n## Evidence\n")
    start = blocks[0][0] if blocks else (evidence if evidence >= 0 else len(text))
    items = [Item(text[:start].partition("\n")[2], current=True)]
    for i, (begin, day) in enumerate(blocks):
        ends = [text.find("\n## ", begin), blocks[i + 1][0] if i + 1 < len(blocks) else -1]
        end = min((e for e in ends if e >= 0), default=len(text))
        items.append(Item(text[begin:end], day))
    return items


# -- running the contexts -----------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    body: str
    path: str
    written_at: date | None


def _ms(began: float) -> float:
    return (time.perf_counter() - began) * 1000


def embed_question(admin: psycopg.Connection, text: str) -> dict:
    """The question's vector from the models.embeddings endpoint: {vector (list), ms} or
    {error_class, error, ms}; never raises for a model failure."""
    row = admin.execute("select value from exo_private.settings where key = 'models.embeddings'").fetchone()
    if row is None:
        return {"error_class": "not_configured", "error": "no models.embeddings setting", "ms": 0.0}
    answer = client.embed_one(row[0], text)
    if "vector" in answer:
        answer["vector"] = json.loads(answer["vector"])
    return answer


def run_packet(
    reader: psycopg.Connection, q: Question, budget: int, vector: list[float] | None
) -> tuple[dict, float]:
    began = time.perf_counter()
    (packet,) = reader.execute(
        "select exo.context_packet_json(%s, token_budget => %s, workspaces => %s, "
        "as_of => coalesce(%s::timestamptz, now()), query_embedding => %s::float8[])",
        (q.question, budget, list(q.workspaces) if q.workspaces else None, q.as_of, vector),
    ).fetchone()
    return packet, _ms(began)


def run_vector(
    admin: psycopg.Connection, q: Question, k: int, vector: list[float], model_id: int
) -> tuple[list[Chunk], float]:
    """The k nearest chunks by exact cosine distance (no index: the HNSW indexes are partial
    expression indexes this query does not match), nearest first."""
    began = time.perf_counter()
    rows = admin.execute(
        """select n.body, d.path, n.written_at
           from (
               select c.id, c.body, c.written_at, c.document_id,
                      e.embedding operator(public.<=>) %(vector)s::float8[]::public.vector as distance
               from exo_private.chunk_embeddings e
               join exo_private.chunks c on c.workspace = e.workspace and c.id = e.chunk_id
               where e.model_id = %(model)s
                 and (%(workspaces)s::text[] is null or e.workspace = any (%(workspaces)s::text[]))
                 and (%(as_of)s::date is null or c.written_at is null or c.written_at <= %(as_of)s::date)
               order by distance, c.id
               limit %(k)s
           ) n
           join exo_private.documents d on d.id = n.document_id
           order by n.distance, n.id""",
        {
            "model": model_id,
            "workspaces": list(q.workspaces) if q.workspaces else None,
            "as_of": q.as_of,
            "vector": vector,
            "k": k,
        },
    ).fetchall()
    return [Chunk(*r) for r in rows], _ms(began)


def lexical_workspaces(admin: psycopg.Connection) -> list[str]:
    """The workspaces whose chunks have a BM25 index (the one the lexical stage reads)."""
    return [
        r[0]
        for r in admin.execute(
            "select w.name from exo_private.workspaces w "
            "where to_regclass(format('exo_private.%I', 'chunks_' || w.name || '_bm25')) is not null "
            "order by w.name"
        )
    ]


def run_bm25(
    admin: psycopg.Connection, q: Question, k: int, workspaces: Sequence[str]
) -> tuple[list[Chunk], float]:
    """The k best chunks by BM25 over each workspace's index (which reads the document's title and
    the words inside a path: exo_private.bm25_chunk_text), merged by score (best first)."""
    began = time.perf_counter()
    hits = []
    for ws in workspaces:
        if q.workspaces and ws not in q.workspaces:
            continue
        index = sql.Literal(sql.Identifier("exo_private", f"chunks_{ws}_bm25").as_string(admin))
        distance = sql.SQL(
            "exo_private.bm25_chunk_text(c.document_title, c.body) operator(public.<@>) "
            "public.to_bm25query(exo_private.bm25_text(%(q)s), {index})"
        ).format(index=index)
        query = sql.SQL(
            """select -({distance}) as score, c.id, c.body, d.path, c.written_at
               from exo_private.{chunks} c
               join exo_private.documents d on d.id = c.document_id
               where {distance} < 0
                 and (%(as_of)s::date is null or c.written_at is null or c.written_at <= %(as_of)s::date)
               order by {distance}
               limit %(k)s"""
        ).format(distance=distance, chunks=sql.Identifier(f"chunks_{ws}"))
        hits.extend(admin.execute(query, {"q": q.question, "as_of": q.as_of, "k": k}).fetchall())
    hits.sort(key=lambda r: (-r[0], r[1]))
    return [Chunk(body, path, day) for _score, _id, body, path, day in hits[:k]], _ms(began)


def score_chunks(q: Question, chunks: Sequence[Chunk], ms: float) -> Outcome:
    text = "\n\n".join(c.body for c in chunks)
    items = [Item(c.body, c.written_at) for c in chunks]
    return score(q, text, items, [c.path for c in chunks], estimate_tokens(text), ms, dated=False)


def score_packet(q: Question, packet: dict, ms: float) -> Outcome:
    paths = [u["path"] for u in packet.get("used") or []]
    return score(q, packet["text"], packet_items(packet), paths, packet["tokens"], ms, dated=True)


# -- the report ---------------------------------------------------------------------------


@dataclass
class QuestionResult:
    question: Question
    outcomes: dict[str, Outcome]
    embed_ms: float | None
    packet_text: str = ""
    """The packet as the reader got it (not in the JSON: it quotes the corpus)."""

    def to_json(self) -> dict:
        q = self.question
        return {
            "question": q.question,
            "kind": q.kind,
            "as_of": q.as_of.isoformat() if q.as_of else None,
            "workspaces": list(q.workspaces) if q.workspaces else None,
            "expect": list(q.expect),
            "stale": list(q.stale),
            "sources": list(q.sources),
            "withheld": list(q.withheld),
            "embed_ms": None if self.embed_ms is None else round(self.embed_ms, 1),
            "results": {m: o.to_json() for m, o in self.outcomes.items()},
        }


def summarise(results: Sequence[QuestionResult], method: str) -> dict:
    """One method over every question it could run: counts and medians."""
    ran = [r.outcomes[method] for r in results if not r.outcomes[method].unavailable]
    with_sources = [
        r.outcomes[method] for r in results if r.question.sources and not r.outcomes[method].unavailable
    ]
    return {
        "questions": len(ran),
        "unavailable": len(results) - len(ran),
        "answered": sum(o.answered for o in ran),
        "every_answer": sum(o.every for o in ran),
        "any_answer": sum(o.any for o in ran),
        "stale_as_current": sum(bool(o.stale) for o in ran),
        "leaked": sum(bool(o.leaked) for o in ran),
        "with_sources": len(with_sources),
        "a_source_found": sum(bool(o.sources) for o in with_sources),
        "tokens_median": statistics.median(o.tokens for o in ran) if ran else None,
        "tokens_total": sum(o.tokens for o in ran),
        "ms_median": round(statistics.median(o.ms for o in ran), 1) if ran else None,
    }


@dataclass
class ShadowReport:
    questions_file: str
    k: int
    budget: int
    embedding: dict
    results: list[QuestionResult]
    generated_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    def to_json(self) -> dict:
        """The report (the file's name, never its path: the JSON may be committed)."""
        return {
            "generated_at": self.generated_at,
            "questions_file": self.questions_file,
            "k": self.k,
            "token_budget": self.budget,
            "embedding": self.embedding,
            "methods": list(METHODS),
            "questions": [r.to_json() for r in self.results],
            "overall": {m: summarise(self.results, m) for m in METHODS},
        }


Progress = Callable[[int, int], None]
"""progress(questions done, questions in all)."""


def evaluate(
    admin: psycopg.Connection,
    reader: psycopg.Connection,
    questions: Sequence[Question],
    questions_file: str,
    k: int = 10,
    budget: int = 4000,
    workspaces: Sequence[str] = (),
    progress: Progress | None = None,
) -> ShadowReport:
    """Run every question through the packet (reader: an exo_reader connection) and both
    baselines (admin: the owner or admin), with autocommit connections. `workspaces` narrows
    questions that name none."""
    if not 1 <= k <= 200:
        raise ShadowProblem(f"k must be between 1 and 200, got {k}")
    if not admin.execute("select exists (select 1 from exo_private.chunks)").fetchone()[0]:
        raise ShadowProblem("the database holds no chunks yet: ingest documents first")
    known = set(lexical_workspaces(admin))
    missing = sorted(set(workspaces) - known) + sorted(
        {w for q in questions for w in (q.workspaces or ()) if w not in known}
    )
    if missing:
        raise ShadowProblem(f"unknown workspace(s) {', '.join(dict.fromkeys(missing))}")
    if workspaces:
        questions = [q if q.workspaces else replace(q, workspaces=tuple(workspaces)) for q in questions]
    model_id, model, dimensions = admin.execute(
        "select m.id, m.name, m.dimensions from (select exo_private.active_embedding_model() as id) a "
        "left join exo_private.embedding_models m on m.id = a.id"
    ).fetchone()
    # The chunk vectors' model, and how many questions could not be embedded, per error class.
    errors: dict[str, int] = {}
    embedding = {"model": model, "dimensions": dimensions, "errors": errors}
    results = []
    for done, q in enumerate(questions):
        vector, embed_ms, why = None, None, None
        if model_id is None:
            why = "no chunk vectors stored (run the embed queue)"
        else:
            answer = embed_question(admin, q.question)
            embed_ms = answer["ms"]
            if "vector" in answer:
                vector = answer["vector"]
            else:
                why = f"query embedding unavailable ({answer['error_class']})"
                errors[answer["error_class"]] = errors.get(answer["error_class"], 0) + 1
        packet, ms = run_packet(reader, q, budget, vector)
        outcomes = {"packet": score_packet(q, packet, ms)}
        if vector is not None:
            chunks, ms = run_vector(admin, q, k, vector, model_id)
            outcomes["vector"] = score_chunks(q, chunks, ms)
        else:
            outcomes["vector"] = Outcome(unavailable=why)
        chunks, ms = run_bm25(admin, q, k, sorted(known))
        outcomes["bm25"] = score_chunks(q, chunks, ms)
        results.append(QuestionResult(q, outcomes, embed_ms, packet["text"]))
        if progress:
            progress(done + 1, len(questions))
    return ShadowReport(questions_file, k, budget, embedding, results)


# -- rendering ----------------------------------------------------------------------------


def _cell(q: Question, o: Outcome) -> str:
    if o.unavailable:
        return "n/a"
    mark = "yes" if o.every else ("part" if o.any else "no")
    flags = "".join([" STALE" if o.stale else "", " LEAK" if o.leaked else ""])
    sources = f" src {len(o.sources)}/{len(q.sources)}" if q.sources else ""
    return f"{mark}{flags} {o.tokens}t {o.ms:.0f}ms{sources}"


def render_questions(report: ShadowReport) -> Table:
    """Per question: for each method, whether the answer is held (yes, part, no), STALE and LEAK
    flags, tokens, milliseconds and the expected sources cited."""
    table = Table(title=f"shadow evaluation: {report.questions_file} (k={report.k}, budget {report.budget})")
    table.add_column("question", overflow="fold", max_width=48)
    table.add_column("kind")
    for m in METHODS:
        table.add_column(m)
    for r in report.results:
        table.add_row(
            escape(r.question.question),
            escape(r.question.kind),
            *(_cell(r.question, r.outcomes[m]) for m in METHODS),
        )
    return table


def render_overall(report: ShadowReport) -> Table:
    """Per method: counts over the questions it ran, and median tokens and latency."""
    table = Table(title="overall")
    columns = ["method", "answered", "every", "any", "stale", "leaked", "a source", "tokens p50", "ms p50"]
    for c in columns:
        table.add_column(c, justify="left" if c == "method" else "right")
    for m in METHODS:
        s = summarise(report.results, m)
        n = s["questions"]
        table.add_row(
            m,
            f"{s['answered']}/{n}",
            f"{s['every_answer']}/{n}",
            f"{s['any_answer']}/{n}",
            f"{s['stale_as_current']}/{n}",
            f"{s['leaked']}/{n}",
            f"{s['a_source_found']}/{s['with_sources']}",
            "-" if s["tokens_median"] is None else f"{s['tokens_median']:.0f}",
            "-" if s["ms_median"] is None else f"{s['ms_median']:.0f}",
        )
    return table
