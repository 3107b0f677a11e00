"""`exo eval extraction CORPUS_DIR`: graph extraction scored against a corpus with known ground
truth (`exo eval corpus` writes one), for each extraction configuration.

For each configuration a scratch database is migrated from zero, its settings set (CONFIGURATIONS),
the owner named, the corpus folder ingested into one workspace and its chat export imported, and
the worker drains the extract queue with the chat model (the models.chat endpoint of your
database, or --endpoint). The graph it built is then scored (`score`, no model):

- relations: a stored relation counts when its predicate belongs to a family
  (exocortex.plpy.relation_paths.predicate_family, its direction with it) and both ends resolve
  to ground-truth entities (canonical key, less a leading "the"; a person also by a first name
  only they have). It is correct when the ground truth holds that family between those ends
  (either way round for a symmetric family). Precision: correct / counted; recall: ground-truth
  relations found / stated; both also for person-to-person families alone. Relations of no
  family (TALKED_WITH, WROTE_TO, ...) are counted apart, as `unscored`.
- entity types: of the stored entities that resolve to a ground-truth entity, the share typed as
  the ground truth types it.
- time: the worker's wall time over the windows it extracted (seconds a window, windows an hour).

The configuration `patterns` runs no chat model at all (models.chat's url null): the graph is the
pattern pass's (worker/exocortex/extraction/relation_patterns.py), and the run takes seconds.

Scratch databases are dropped afterwards; nothing is written to your database.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb
from rich.table import Table

from exocortex.config import Config
from exocortex.db import admin_url, connect, role_url
from exocortex.extraction import ner
from exocortex.ingest import pipeline
from exocortex.ingest.chat import import_chat
from exocortex.ops.migrate import scratch_database
from exocortex.plpy.relation_paths import SYMMETRIC, predicate_family
from exocortex.plpy.textnorm import canonical_key
from exocortex.worker.loop import Worker

GROUND_TRUTH = "ground_truth.json"
CHATS = "chats.jsonl"
WORKSPACE = "personal"
PERSON_FAMILIES = frozenset({"PARENT_OF", "SIBLING_OF", "SPOUSE_OF", "FRIEND_OF"})
# The settings of each configuration: model only, a second relation pass, the NER type check
# (each without the pattern pass), the shipped extraction (as the settings table has it) with
# structural edges, and the pattern pass alone with no chat model (NO_MODEL: models.chat's url
# null; it takes seconds).
NO_MODEL = "no_model"
CONFIGURATIONS = {
    "model": {
        "extraction.relation_pass": False,
        "extraction.ner": "none",
        "graph.structural": False,
        "extraction.patterns": False,
    },
    "two-pass": {
        "extraction.relation_pass": True,
        "extraction.ner": "none",
        "graph.structural": False,
        "extraction.patterns": False,
    },
    "ner": {
        "extraction.relation_pass": False,
        "extraction.ner": "spacy",
        "graph.structural": False,
        "extraction.patterns": False,
    },
    "structural": {"graph.structural": True},
    "patterns": {
        NO_MODEL: True,
        "extraction.patterns": True,
        "extraction.ner": "none",
        "graph.structural": False,
    },
}


class EvalProblem(Exception):
    """The evaluation cannot run: no corpus, a malformed ground truth, an unknown configuration."""


# -- ground truth and scoring ----------------------------------------------------------------------


@dataclass(frozen=True)
class Truth:
    owner: str
    types: dict[str, str]  # entity name -> type
    keys: dict[str, str]  # canonical key (and a person's unique first name) -> entity name
    relations: frozenset[tuple[str, str, str]]  # (family, subject, object); symmetric ones both ways

    @classmethod
    def load(cls, corpus: Path) -> Truth:
        path = corpus / GROUND_TRUTH
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            entities = {e["name"]: e["type"] for e in data["entities"]}
            stated = [(r["predicate"], r["subject"], r["object"]) for r in data["relations"]]
            owner = data["owner"]
        except FileNotFoundError:
            raise EvalProblem(f"{path} not found: CORPUS_DIR is a folder `exo eval corpus` wrote") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise EvalProblem(f"{path} is not a ground truth file ({type(exc).__name__}: {exc})") from None
        return cls.build(owner, entities, stated)

    @classmethod
    def build(cls, owner: str, entities: dict[str, str], stated: Iterable[tuple[str, str, str]]) -> Truth:
        keys = {canonical_key(name): name for name in entities}
        firsts: dict[str, list[str]] = {}
        for name, kind in entities.items():
            if kind == "Person" and " " in name:
                firsts.setdefault(canonical_key(name.split()[0]), []).append(name)
        for first, names in firsts.items():
            if len(names) == 1 and first not in keys:
                keys[first] = names[0]
        relations = set()
        for family, s, o in stated:
            relations.add((family, s, o))
            if family in SYMMETRIC:
                relations.add((family, o, s))
        return cls(owner, entities, keys, frozenset(relations))

    def resolve(self, key: str | None) -> str | None:
        key = key or ""
        return self.keys.get(key) or self.keys.get(key.removeprefix("the "))

    def stated(self, person_only: bool = False) -> set[tuple[str, str, str]]:
        """Ground-truth relations once each (a symmetric one in one direction)."""
        return {_one_way(r) for r in self.relations if not person_only or r[0] in PERSON_FAMILIES}


def _one_way(r: tuple[str, str, str]) -> tuple[str, str, str]:
    family, s, o = r
    return (family, min(s, o), max(s, o)) if family in SYMMETRIC else r


@dataclass
class Scores:
    relations: int = 0
    """Stored relations (every origin)."""
    scored: int = 0
    """Distinct (family, subject, object) with a family and both ends resolved."""
    correct: int = 0
    stated: int = 0
    found: int = 0
    person_scored: int = 0
    person_correct: int = 0
    person_stated: int = 0
    person_found: int = 0
    unscored: int = 0
    """Stored relations with no family or an end that is no ground-truth entity."""
    entities_matched: int = 0
    entities_typed_right: int = 0
    by_origin: dict = field(default_factory=dict)

    @staticmethod
    def _share(n: int, d: int) -> float | None:
        return round(n / d, 3) if d else None

    @property
    def precision(self) -> float | None:
        return self._share(self.correct, self.scored)

    @property
    def recall(self) -> float | None:
        return self._share(self.found, self.stated)

    @property
    def person_precision(self) -> float | None:
        return self._share(self.person_correct, self.person_scored)

    @property
    def person_recall(self) -> float | None:
        return self._share(self.person_found, self.person_stated)

    @property
    def type_accuracy(self) -> float | None:
        return self._share(self.entities_typed_right, self.entities_matched)

    def to_json(self) -> dict:
        return dict(
            asdict(self),
            precision=self.precision,
            recall=self.recall,
            person_precision=self.person_precision,
            person_recall=self.person_recall,
            type_accuracy=self.type_accuracy,
        )


def score(conn: psycopg.Connection, truth: Truth, workspace: str = WORKSPACE) -> Scores:
    """The workspace's current graph against the ground truth (see the module's docstring)."""
    out = Scores()
    predicted: set[tuple[str, str, str]] = set()
    for s_key, predicate, o_key, origin in conn.execute(
        """select s.canonical_key, r.predicate, o.canonical_key, r.origin
           from exo_private.relations r
           join exo_private.entities s on s.id = r.subject_id
           join exo_private.entities o on o.id = r.object_id
           where r.workspace = %s""",
        (workspace,),
    ):
        out.relations += 1
        out.by_origin[origin] = out.by_origin.get(origin, 0) + 1
        family = predicate_family(predicate)
        s, o = truth.resolve(s_key), truth.resolve(o_key)
        if family is None or s is None or o is None or s == o:
            out.unscored += 1
            continue
        name, turned = family
        predicted.add(_one_way((name, o, s) if turned else (name, s, o)))
    stated, person_stated = truth.stated(), truth.stated(person_only=True)
    out.scored, out.stated, out.person_stated = len(predicted), len(stated), len(person_stated)
    right = {r for r in predicted if r in truth.relations}
    out.correct, out.found = len(right), len(right & stated)
    out.person_scored = sum(1 for r in predicted if r[0] in PERSON_FAMILIES)
    out.person_correct = sum(1 for r in right if r[0] in PERSON_FAMILIES)
    out.person_found = len(right & person_stated)
    for key, kind in conn.execute(
        "select e.canonical_key, e.type::text from exo_private.entities e where e.workspace = %s",
        (workspace,),
    ):
        name = truth.resolve(key)
        if name is not None:
            out.entities_matched += 1
            out.entities_typed_right += truth.types[name] == kind
    return out


# -- running a configuration -----------------------------------------------------------------------


@dataclass
class Result:
    configuration: str
    settings: dict
    windows: int = 0
    seconds: float = 0.0
    scores: Scores = field(default_factory=Scores)
    dropped: dict = field(default_factory=dict)
    skipped: str | None = None

    @property
    def seconds_per_window(self) -> float | None:
        return round(self.seconds / self.windows, 2) if self.windows else None

    @property
    def windows_per_hour(self) -> float | None:
        return round(3600 * self.windows / self.seconds) if self.seconds and self.windows else None

    def to_json(self) -> dict:
        return {
            "configuration": self.configuration,
            "settings": self.settings,
            "skipped": self.skipped,
            "windows": self.windows,
            "seconds": round(self.seconds, 1),
            "seconds_per_window": self.seconds_per_window,
            "windows_per_hour": self.windows_per_hour,
            "dropped": self.dropped,
            "scores": self.scores.to_json(),
        }


def _set(admin: psycopg.Connection, key: str, value) -> None:
    if admin.execute("select 1 from exo_private.settings where key = %s", (key,)).fetchone() is None:
        raise EvalProblem(f"setting {key} does not exist in this version's schema")
    admin.execute("update exo_private.settings set value = %s where key = %s", (Jsonb(value), key))


def run_configuration(
    cfg: Config, corpus: Path, truth: Truth, name: str, chat: dict, progress: Callable[[str], None] = print
) -> Result:
    """Build the corpus's graph in a scratch database with configuration `name`, and score it."""
    settings = CONFIGURATIONS[name]
    result = Result(name, settings)
    if settings.get("extraction.ner") == "spacy" and not ner.installed():
        result.skipped = "spaCy is not installed (the optional extra `ner`)"
        return result
    with scratch_database(cfg, f"eval_extraction_{name.replace('-', '_')}") as db:
        with connect(admin_url(cfg, db), "exo-eval-extraction", autocommit=True) as admin:
            if not settings.get(NO_MODEL):
                _set(admin, "models.chat", chat)
            else:  # no model: only the url goes (the same model name: no generation change)
                admin.execute(
                    """update exo_private.settings set value = value || '{"url": null}' where key = 'models.chat'"""
                )
            for key, value in settings.items():
                if key != NO_MODEL:
                    _set(admin, key, value)
            result.settings = {
                k: v
                for k, v in admin.execute(
                    "select key, value from exo_private.settings where key = any(%s) order by key",
                    (
                        [
                            "extraction.relation_pass",
                            "extraction.ner",
                            "graph.structural",
                            "extraction.patterns",
                        ],
                    ),
                )
            }
            if settings.get(NO_MODEL):
                result.settings["models.chat"] = None
            admin.execute("select exo_private.set_owner(%s)", (truth.owner,))
        progress(f"{name}: ingesting {corpus}")
        pipeline.ingest(cfg, corpus / "corpus", workspace=WORKSPACE, dbname=db)
        if (corpus / CHATS).exists():
            with connect(role_url(cfg, "exo_writer", db), "exo-eval-extraction", autocommit=True) as writer:
                import_chat(writer, corpus / CHATS, "jsonl", workspace=WORKSPACE)
        progress(f"{name}: extracting")
        began = time.perf_counter()
        Worker(cfg, dbname=db, once=True, queues=("extract",), poll_s=0.05).run()
        result.seconds = time.perf_counter() - began
        with connect(admin_url(cfg, db), "exo-eval-extraction", autocommit=True) as admin:
            result.windows = admin.execute(
                "select count(*) from exo_private.extraction_windows where extracted_at is not null"
            ).fetchone()[0]
            result.dropped = {
                k: int(v)
                for k, v in admin.execute(
                    """select d.key, sum(d.value::numeric)
                       from exo_private.extraction_windows w
                       cross join lateral jsonb_each(coalesce(w.extraction_stats -> 'dropped', '{}')) d
                       where jsonb_typeof(d.value) = 'number'
                       group by 1 order by 1"""
                )
            }
            result.scores = score(admin, truth)
    if result.windows == 0:
        result.skipped = f"no window was extracted: is the chat endpoint {chat.get('url')} up?"
    return result


def chat_endpoint(cfg: Config, url: str | None) -> dict:
    """models.chat of your database, its url replaced by `url` when given."""
    with connect(admin_url(cfg), "exo-eval-extraction", autocommit=True) as admin:
        row = admin.execute("select value from exo_private.settings where key = 'models.chat'").fetchone()
    chat = dict(row[0]) if row else {}
    if url:
        chat["url"] = url
    return chat


def evaluate(
    cfg: Config,
    corpus: Path,
    configurations: Iterable[str] = tuple(CONFIGURATIONS),
    url: str | None = None,
    progress: Callable[[str], None] = print,
) -> list[Result]:
    corpus = Path(corpus)
    if not (corpus / "corpus").is_dir():
        raise EvalProblem(f"{corpus} has no corpus/ folder: CORPUS_DIR is a folder `exo eval corpus` wrote")
    unknown = [c for c in configurations if c not in CONFIGURATIONS]
    if unknown:
        raise EvalProblem(
            f"unknown configuration {unknown[0]!r}; expected one of {', '.join(CONFIGURATIONS)}"
        )
    truth = Truth.load(corpus)
    needs_model = any(not CONFIGURATIONS[name].get(NO_MODEL) for name in configurations)
    chat = chat_endpoint(cfg, url) if needs_model else {}
    return [run_configuration(cfg, corpus, truth, name, chat, progress) for name in configurations]


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def render_table(results: list[Result]) -> Table:
    table = Table(title="graph extraction against the ground truth")
    for column in (
        "configuration", "precision", "recall", "person P", "person R", "type acc.", "scored",
        "unscored", "windows", "s/window", "windows/h",
    ):  # fmt: skip
        table.add_column(column, justify="left" if column == "configuration" else "right")
    for r in results:
        if r.skipped:
            table.add_row(r.configuration, f"skipped: {r.skipped}", *[""] * 9)
            continue
        s = r.scores
        table.add_row(
            r.configuration,
            *(_fmt(v) for v in (s.precision, s.recall, s.person_precision, s.person_recall, s.type_accuracy)),
            str(s.scored),
            str(s.unscored),
            str(r.windows),
            _fmt(r.seconds_per_window),
            _fmt(r.windows_per_hour),
        )
    return table
