"""`exo eval extraction`: compare chat models on a stratified sample of your own documents.

A sample of documents that have extraction windows is drawn per workspace
(proportional allocation, at least one per workspace, largest-remainder
rounding) in an order fixed by md5(seed || ':' || id), so the same seed gives the
same sample, and anyone can reproduce it in psql. Each document's first window
goes through each model with exactly the request the worker sends (the
extraction prompt and json_schema, the max_tokens and caps of the settings,
temperature 0) and the reply is kept or dropped by the same `extraction.parse`.

Nothing is written to the database. The eval connects as exo_writer because
the settings and the windows live in exo_private, which exo_reader cannot read;
it only SELECTs, inside one read-only, repeatable-read transaction that ends
before the first model call.

A judge model, when named, reads each kept relation next to its window and
says whether the text states it, states it with subject and object swapped, or
neither; its failures are counted, never fatal.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

import psycopg
from rich.markup import escape
from rich.table import Table

from exocortex.db import transaction
from exocortex.extraction import llm as extraction
from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import Endpoint, ModelError

CANDIDATE_STAGES = ("chunked", "embedded", "graphed")
"""Documents in these stages have extraction windows."""

VERDICTS = ("correct", "reversed", "wrong")
JUDGE_MAX_TOKENS = 64
"""A verdict is about ten tokens; the rest is room for a server that ignores the schema."""

# The judge sees one window and one triple and must name which of three cases holds.
# "reversed" gets its own answer because swapping subject and object ("Northwind Labs
# works at Iris Calder") is the typical mistake of a small extraction model, and a plain
# right/wrong judge would hide it.
JUDGE_PROMPT = (
    "You check one relation that was extracted from a note. You are given the text and a "
    'relation as subject, predicate, object. Answer "correct" if the text states that the '
    'subject <predicate> the object. Answer "reversed" if the text states it the other way '
    'round, that the object <predicate> the subject. Answer "wrong" if the text states '
    'neither. Reply with JSON only: {"verdict": "correct"}, {"verdict": "reversed"} or '
    '{"verdict": "wrong"}.'
)

JUDGE_RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["verdict"],
            "properties": {"verdict": {"type": "string", "enum": list(VERDICTS)}},
        },
    },
}

Progress = Callable[[str, int, int], None]
"""progress(model, documents done, documents in the sample)."""


class EvalProblem(Exception):
    """The eval cannot start (no settings, no endpoint, nothing to sample)."""


class BadVerdict(Exception):
    """The judge answered, but not with one of VERDICTS."""


# -- the sample ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SampledDoc:
    document_id: int
    path: str
    workspace: str
    window_id: int
    window_text: str
    """The document's first extraction window."""


_CANDIDATES = """
    from exo_private.documents d
    where d.stage::text = any(%(stages)s) and d.workspace is not null
      and exists (select 1 from exo_private.extraction_windows w where w.document_id = d.id)
"""


def population(conn: psycopg.Connection) -> dict[str, int]:
    """Documents that could be sampled, per workspace."""
    rows = conn.execute(
        f"select d.workspace, count(*) {_CANDIDATES} group by d.workspace order by d.workspace",
        {"stages": list(CANDIDATE_STAGES)},
    ).fetchall()
    return {workspace: int(n) for workspace, n in rows}


def allocate(counts: dict[str, int], n: int) -> dict[str, int]:
    """How many of n to take from each workspace: proportional to its count, at least one
    each, rounded by largest remainder. n at least the total takes everything; n smaller
    than the number of workspaces takes one from each of the n largest."""
    total = sum(counts.values())
    if n >= total:
        return dict(counts)
    by_size = sorted((w for w in counts if counts[w] > 0), key=lambda w: (-counts[w], w))
    if n < len(by_size):
        return {w: int(w in by_size[:n]) for w in counts}
    quota = {w: n * counts[w] / total for w in counts}
    alloc = {w: max(1, int(quota[w])) if counts[w] else 0 for w in counts}
    # n < total, so quota[w] < counts[w]: a floor never exceeds what a workspace has.
    while sum(alloc.values()) < n:
        w = max(
            (w for w in by_size if alloc[w] < counts[w]),
            key=lambda w: (quota[w] - alloc[w], counts[w], w),
        )
        alloc[w] += 1
    while sum(alloc.values()) > n:  # the minimum of one pushed the total over n
        w = min((w for w in by_size if alloc[w] > 1), key=lambda w: (quota[w] - alloc[w], -counts[w], w))
        alloc[w] -= 1
    return alloc


def sample_documents(conn: psycopg.Connection, n: int, seed: int) -> list[SampledDoc]:
    """A stratified sample of n documents with extraction windows (see `allocate`), each
    workspace's share taken in the order of md5(seed || ':' || id); by workspace, then that
    order. Only SELECTs, in one snapshot."""
    if n < 1:
        raise ValueError(f"the sample size must be at least 1, got {n}")
    with _snapshot(conn):
        quotas = {w: k for w, k in allocate(population(conn), n).items() if k}
        rows = conn.execute(
            f"""with quota (workspace, k) as (select * from unnest(%(workspaces)s::text[], %(ks)s::int[])),
                     ranked as (
                         select d.id, d.path, d.workspace,
                                row_number() over (
                                    partition by d.workspace
                                    order by md5(%(seed)s::text || ':' || d.id::text), d.id
                                ) as rank
                         {_CANDIDATES}
                     )
                select r.id, r.path, r.workspace, w.id, w.body
                from ranked r
                join quota q on q.workspace = r.workspace and r.rank <= q.k
                cross join lateral (
                    select id, body from exo_private.extraction_windows
                    where document_id = r.id order by ordinal limit 1
                ) w
                order by r.workspace, r.rank""",
            {
                "workspaces": list(quotas),
                "ks": list(quotas.values()),
                "seed": str(seed),
                "stages": list(CANDIDATE_STAGES),
            },
        ).fetchall()
    return [SampledDoc(int(d), path, ws, int(w), body) for d, path, ws, w, body in rows]


@contextmanager
def _snapshot(conn: psycopg.Connection) -> Iterator[None]:
    """One read-only, repeatable-read transaction; a savepoint inside the caller's own."""
    fresh = conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    with transaction(conn):
        if fresh:
            conn.execute("set transaction isolation level repeatable read, read only")
        yield


# -- the results --------------------------------------------------------------------------


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


@dataclass
class JudgeResult:
    model: str
    verdicts: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    """Per error class, and bad_verdict for an answer that is not one of VERDICTS."""
    seconds: float = 0.0

    @property
    def judged(self) -> int:
        return sum(self.verdicts.values())

    @property
    def correctness(self) -> float | None:
        return _ratio(self.verdicts["correct"], self.judged)

    @property
    def reversed_rate(self) -> float | None:
        return _ratio(self.verdicts["reversed"], self.judged)

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "judged": self.judged,
            "verdicts": {v: self.verdicts[v] for v in VERDICTS},
            "relation_correctness": _round(self.correctness, 4),
            "reversed_direction_rate": _round(self.reversed_rate, 4),
            "failures": dict(self.failures),
            "seconds": round(self.seconds, 2),
        }


@dataclass
class DocResult:
    document_id: int
    seconds: float
    error: str | None = None
    entities: int = 0
    relations: int = 0
    dropped: dict = field(default_factory=dict)
    finish_reason: str | None = None
    completion_tokens: int = 0
    verdicts: list[str] = field(default_factory=list)
    """One per kept relation that the judge answered for, in order."""

    def to_json(self) -> dict:
        if self.error:
            return {"document_id": self.document_id, "error": self.error, "seconds": round(self.seconds, 2)}
        out = {
            "document_id": self.document_id,
            "entities": self.entities,
            "relations": self.relations,
            "dropped": self.dropped,
            "finish_reason": self.finish_reason,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 2),
        }
        if self.verdicts:
            out["verdicts"] = self.verdicts
        return out


@dataclass
class ModelResult:
    model: str
    sampled: int = 0
    """Documents sent to the model."""
    docs: int = 0
    """Documents it answered for (sampled minus errors)."""
    entities: int = 0
    relations: int = 0
    dropped: Counter = field(default_factory=Counter)
    empty: int = 0
    """Answered documents with no entity kept."""
    errors: Counter = field(default_factory=Counter)
    first_error: dict[str, str] = field(default_factory=dict)
    """The first message of each error class (for the terminal; not in the JSON)."""
    seconds: float = 0.0
    """Wall time of all extraction calls, failed ones included; judge calls excluded."""
    completion_tokens: int = 0
    truncated: int = 0
    """Replies cut off by max_tokens (finish_reason "length")."""
    judge: JudgeResult | None = None
    documents: list[DocResult] = field(default_factory=list)

    @property
    def entities_per_doc(self) -> float | None:
        return _ratio(self.entities, self.docs)

    @property
    def relations_per_doc(self) -> float | None:
        return _ratio(self.relations, self.docs)

    @property
    def grounding_rate(self) -> float | None:
        """Kept entities over kept plus ungrounded ones."""
        return _ratio(self.entities, self.entities + self.dropped["ungrounded_entity"])

    @property
    def docs_per_hour(self) -> float | None:
        return _ratio(self.docs * 3600, self.seconds)

    @property
    def mean_completion_tokens(self) -> float | None:
        return _ratio(self.completion_tokens, self.docs)

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "sampled": self.sampled,
            "docs": self.docs,
            "entities": self.entities,
            "relations": self.relations,
            "entities_per_doc": _round(self.entities_per_doc, 3),
            "relations_per_doc": _round(self.relations_per_doc, 3),
            "grounding_rate": _round(self.grounding_rate, 4),
            "dropped": dict(sorted(self.dropped.items())),
            "dropped_total": sum(self.dropped.values()),
            "empty_extractions": self.empty,
            "errors": dict(sorted(self.errors.items())),
            "truncated": self.truncated,
            "mean_completion_tokens": _round(self.mean_completion_tokens, 1),
            "seconds": round(self.seconds, 2),
            "docs_per_hour": _round(self.docs_per_hour, 1),
            "judge": self.judge.to_json() if self.judge else None,
            "documents": [d.to_json() for d in self.documents],
        }


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


@dataclass
class EvalReport:
    seed: int
    n: int
    """The sample size asked for."""
    population: dict[str, int]
    sample: list[SampledDoc]
    settings: dict
    """What the requests were built from (no URLs: the JSON may be committed to docs/)."""
    judge: str | None
    results: list[ModelResult]
    generated_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    @property
    def per_workspace(self) -> dict[str, int]:
        return dict(sorted(Counter(d.workspace for d in self.sample).items()))

    def to_json(self) -> dict:
        """The report as JSON: document ids but no paths, names or text, so it can be committed."""
        return {
            "generated_at": self.generated_at,
            "sample": {
                "seed": self.seed,
                "n": self.n,
                "size": len(self.sample),
                "population": self.population,
                "per_workspace": self.per_workspace,
                "document_ids": [d.document_id for d in self.sample],
            },
            "settings": self.settings,
            "models": [r.to_json() for r in self.results],
        }


# -- running it ---------------------------------------------------------------------------


def _settings(conn: psycopg.Connection) -> dict:
    keys = ["models.chat", "extraction.max_tokens", "extraction.max_entities", "extraction.max_relations"]
    try:
        with transaction(conn):
            rows = dict(
                conn.execute(
                    "select key, value from exo_private.settings where key = any(%s)", (keys,)
                ).fetchall()
            )
    except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName):
        raise EvalProblem("the database has no settings table yet: run `exo migrate` first") from None
    missing = [k for k in keys if k not in rows]
    if missing:
        raise EvalProblem(f"the settings lack {', '.join(missing)}: run `exo migrate`")
    return rows


def _endpoint(setting: dict, model: str, url: str | None) -> Endpoint:
    value = {**setting, "model": model}
    if url:
        value["url"] = url
    try:
        return Endpoint.from_setting(value)
    except ValueError as exc:
        raise EvalProblem(f"models.chat: {exc} (or pass an endpoint URL)") from None


def judge_relation(endpoint: Endpoint, window: str, relation: dict) -> str:
    """The judge's verdict on one relation; ModelError or BadVerdict when it has none."""
    reply = client.chat(
        endpoint,
        [
            {"role": "system", "content": JUDGE_PROMPT},
            {
                "role": "user",
                "content": f'Text:\n"""\n{window}\n"""\n\nRelation:\nsubject: {relation["subject"]}\n'
                f"predicate: {relation['predicate']}\nobject: {relation['object']}",
            },
        ],
        max_tokens=JUDGE_MAX_TOKENS,
        response_format=JUDGE_RESPONSE_FORMAT,
        temperature=0.0,
    )
    data = extraction.outermost_json_object(reply.content, ("verdict",))
    verdict = data.get("verdict") if data else None
    if isinstance(verdict, str) and verdict.strip().lower() in VERDICTS:
        return verdict.strip().lower()
    raise BadVerdict(reply.content[:200])


def evaluate(
    conn: psycopg.Connection,
    models: list[str],
    n: int,
    seed: int,
    judge: str | None = None,
    endpoint_url: str | None = None,
    *,
    judge_url: str | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """Run a stratified sample of n documents through each model at production settings.

    Each model's endpoint is the models.chat setting with `model` replaced by its name and
    `url` by endpoint_url when given (llama-server serves one model whatever the name;
    Ollama and vLLM serve several by name). An empty `models` means the setting's own
    model. The judge's endpoint follows the same rules, with judge_url before endpoint_url.
    A failing call is counted by its error class and the run goes on; nothing is retried.

    Only SELECTs, in one read-only transaction that ends before the first model call.
    """
    with _snapshot(conn):
        settings = _settings(conn)
        counts = population(conn)
        sample = sample_documents(conn, n, seed) if counts else []
    if not sample:
        raise EvalProblem(
            "no document has extraction windows yet: run `exo ingest` first "
            f"(documents in stage {', '.join(CANDIDATE_STAGES)} are sampled)"
        )
    chat = settings["models.chat"]
    if not isinstance(chat, dict):
        raise EvalProblem(f"models.chat must be a JSON object, got {chat!r}")
    names = list(dict.fromkeys(m.strip() for m in models if m.strip())) or [chat.get("model")]
    if not all(isinstance(m, str) and m for m in names):
        raise EvalProblem("models.chat names no model: name one with --models")
    endpoints = [_endpoint(chat, name, endpoint_url) for name in names]
    judge_endpoint = _endpoint(chat, judge, judge_url or endpoint_url) if judge else None
    max_tokens = int(settings["extraction.max_tokens"])
    max_entities = int(settings["extraction.max_entities"])
    max_relations = int(settings["extraction.max_relations"])
    use_format = bool(chat.get("response_format", True))  # as the worker decides
    fmt = extraction.response_format(max_entities, max_relations) if use_format else None
    report = EvalReport(
        seed=seed,
        n=n,
        population=counts,
        sample=sample,
        settings={
            "models.chat": {"timeout_s": endpoints[0].timeout_s, "response_format": use_format},
            "extraction.max_tokens": max_tokens,
            "extraction.max_entities": max_entities,
            "extraction.max_relations": max_relations,
            "temperature": 0.0,
            "judge": judge,
            "judge_max_tokens": JUDGE_MAX_TOKENS if judge else None,
        },
        judge=judge,
        results=[],
    )
    for endpoint in endpoints:
        result = ModelResult(endpoint.model, judge=JudgeResult(judge) if judge else None)
        report.results.append(result)
        for i, doc in enumerate(sample):
            if progress:
                progress(endpoint.model, i, len(sample))
            _extract_one(endpoint, doc, result, fmt, max_tokens, max_entities, max_relations, judge_endpoint)
        if progress:
            progress(endpoint.model, len(sample), len(sample))
    return report


def _extract_one(
    endpoint: Endpoint,
    doc: SampledDoc,
    result: ModelResult,
    fmt: dict | None,
    max_tokens: int,
    max_entities: int,
    max_relations: int,
    judge_endpoint: Endpoint | None,
) -> None:
    result.sampled += 1
    began = time.perf_counter()
    try:
        reply = client.chat(
            endpoint,
            extraction.messages(doc.window_text),
            max_tokens=max_tokens,
            response_format=fmt,
            temperature=0.0,
        )
    except ModelError as exc:
        seconds = time.perf_counter() - began
        result.seconds += seconds
        result.errors[exc.error_class] += 1
        result.first_error.setdefault(exc.error_class, str(exc))
        result.documents.append(DocResult(doc.document_id, seconds, error=exc.error_class))
        return
    seconds = time.perf_counter() - began
    parsed = extraction.parse(reply.content, doc.window_text, max_entities, max_relations)
    result.seconds += seconds
    result.docs += 1
    result.entities += len(parsed.entities)
    result.relations += len(parsed.relations)
    result.dropped.update(parsed.dropped)
    result.empty += not parsed.entities
    result.completion_tokens += reply.completion_tokens
    result.truncated += reply.finish_reason == "length"
    doc_result = DocResult(
        doc.document_id,
        seconds,
        entities=len(parsed.entities),
        relations=len(parsed.relations),
        dropped=dict(parsed.dropped),
        finish_reason=reply.finish_reason,
        completion_tokens=reply.completion_tokens,
    )
    result.documents.append(doc_result)
    if judge_endpoint is None or result.judge is None:
        return
    for relation in parsed.relations:
        began = time.perf_counter()
        try:
            verdict = judge_relation(judge_endpoint, doc.window_text, relation)
        except ModelError as exc:
            result.judge.failures[exc.error_class] += 1
            result.first_error.setdefault(f"judge {exc.error_class}", str(exc))
            continue
        except BadVerdict:
            result.judge.failures["bad_verdict"] += 1
            continue
        finally:
            result.judge.seconds += time.perf_counter() - began
        result.judge.verdicts[verdict] += 1
        doc_result.verdicts.append(verdict)


# -- rendering ----------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _rows(report: EvalReport) -> list[tuple[str, list[str]]]:
    """(metric, one cell per model); sub-rows of a breakdown start with two spaces."""
    results = report.results
    rows: list[tuple[str, list[str]]] = [
        ("documents answered", [f"{r.docs} / {r.sampled}" for r in results]),
        ("entities / doc", [_num(r.entities_per_doc) for r in results]),
        ("relations / doc", [_num(r.relations_per_doc) for r in results]),
        ("grounding rate", [_pct(r.grounding_rate) for r in results]),
        ("dropped items", [str(sum(r.dropped.values())) for r in results]),
    ]
    for reason in sorted({k for r in results for k in r.dropped}):
        rows.append((f"  {reason}", [str(r.dropped[reason]) for r in results]))
    rows.append(("empty extractions", [str(r.empty) for r in results]))
    rows.append(("errors", [str(sum(r.errors.values())) for r in results]))
    for error_class in sorted({k for r in results for k in r.errors}):
        rows.append((f"  {error_class}", [str(r.errors[error_class]) for r in results]))
    rows += [
        ("truncated replies", [str(r.truncated) for r in results]),
        ("mean completion tokens", [_num(r.mean_completion_tokens, 0) for r in results]),
        ("seconds", [f"{r.seconds:.1f}" for r in results]),
        ("docs / hour", [_num(r.docs_per_hour, 0) for r in results]),
    ]
    judges = [r.judge for r in results]
    if report.judge and all(judges):
        rows += [
            ("relations judged", [str(j.judged) for j in judges]),
            ("relation correctness", [_pct(j.correctness) for j in judges]),
            ("reversed direction", [_pct(j.reversed_rate) for j in judges]),
            ("judge failures", [str(sum(j.failures.values())) for j in judges]),
        ]
        for failure in sorted({k for j in judges for k in j.failures}):
            rows.append((f"  {failure}", [str(j.failures[failure]) for j in judges]))
    return rows


def describe_sample(report: EvalReport) -> str:
    total = sum(report.population.values())
    parts = ", ".join(f"{w} {k} of {report.population.get(w, 0)}" for w, k in report.per_workspace.items())
    return f"{len(report.sample)} of {total} documents (seed {report.seed}): {parts}"


def render_table(report: EvalReport) -> Table:
    """One column per model (the sample is described by `describe_sample`)."""
    table = Table(title="extraction eval")
    table.add_column("metric")
    for r in report.results:
        table.add_column(escape(r.model), justify="right", overflow="fold")
    for metric, cells in _rows(report):
        table.add_row(f"[dim]{metric}[/dim]" if metric.startswith("  ") else metric, *cells)
    return table


def render_markdown(report: EvalReport) -> str:
    s = report.settings
    lines = [
        "# Extraction eval",
        "",
        f"Generated {report.generated_at} by `exo eval extraction`.",
        "",
        f"Sample: {describe_sample(report)}.",
        "",
        f"Settings: max_tokens {s['extraction.max_tokens']}, max_entities {s['extraction.max_entities']}, "
        f"max_relations {s['extraction.max_relations']}, temperature 0, json_schema "
        f"{'on' if s['models.chat']['response_format'] else 'off'}"
        + (f"; judge {report.judge}" if report.judge else "")
        + ".",
        "",
        "| metric | " + " | ".join(r.model for r in report.results) + " |",
        "|---|" + "---:|" * len(report.results),
    ]
    for metric, cells in _rows(report):
        label = "&nbsp;&nbsp;" + metric.strip() if metric.startswith("  ") else metric
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
