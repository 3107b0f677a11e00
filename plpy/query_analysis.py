"""What a search reads from its question before any stage runs (stdlib only).

Part of exo_private.retrieve (plpy/retrieve.py): the settings, the chosen workspaces, the
temporal signal and the archive decision, the deference of this search, and the query's
material (entities named, identifiers, content words, title and file keys). `db` is a
retrieve.Statements: prepared statements of the session.
"""

import datetime
import json
import time

from search import Deference, archive_decision, content_words, file_keys, identifiers, ngram_keys, title_keys


def elapsed_ms(since):
    """Milliseconds since a time.monotonic() reading, to two places."""
    return round((time.monotonic() - since) * 1000, 2)


def load_settings(db):
    """The settings a search reads: retrieval.*, packet.*, models.*, deference.*, reader.*."""
    return {
        r["key"]: json.loads(r["value"])
        for r in db.run(
            "settings",
            "select key, value::text from exo_private.settings "
            "where key like 'retrieval.%' or key like 'packet.%' or key like 'models.%' "
            "or key like 'deference.%' or key like 'reader.%'",
            [],
            [],
        )
    }


def choose_workspaces(db, workspaces):
    """The workspaces to search: all (null), else the caller's, each once, in the caller's order."""
    known = [
        r["name"]
        for r in db.run("workspaces", "select name from exo_private.workspaces order by name", [], [])
    ]
    return known if workspaces is None else [w for i, w in enumerate(workspaces) if w not in workspaces[:i]]


def active_model(db):
    """{id, dimensions} of the embedding model in use (None, None before any embedding)."""
    row = db.run(
        "model",
        "select m.id, m.dimensions from exo_private.embedding_models m "
        "where m.id = exo_private.active_embedding_model()",
        [],
        [],
    )
    return (
        {"id": row[0]["id"], "dimensions": row[0]["dimensions"]} if row else {"id": None, "dimensions": None}
    )


def stands_alone(text, start, end):
    """Whether text[start:end] is words of their own, not part of a longer token ("2017-03-28"
    in the file name "2017-03-28.md" is part of an identifier)."""
    before = text[start - 1] if start > 0 else " "
    after = text[end : end + 2]
    return (before.isspace() or before in "([\"'") and (
        not after or after[0].isspace() or (after[0] in ",.;:!?)]\"'" and not after[1:].isalnum())
    )


class Question:
    """One search's reading of its question: day, signal, archive decision, deference, material."""

    def __init__(self, text, as_of):
        self.text = text  # the query's first search.MAX_INPUT_CHARS characters
        self.as_of_day = (as_of or "")[:10] or datetime.date.today().isoformat()
        self.today = datetime.date.fromisoformat(self.as_of_day)
        # The exact moment: nothing sent after it is shown (search.cut_at); None: now.
        self.moment = datetime.datetime.fromisoformat(as_of) if as_of else None

    def read_time(self, db, open_archive):
        """The temporal signal and whether the archive opens before any search."""
        self.signal = json.loads(
            db.run(
                "temporal",
                "select exo.temporal_signal($1, $2)::text as s",
                ["text", "date"],
                [self.text, self.as_of_day],
            )[0]["s"]
        )
        self.archive_open, self.archive_why = archive_decision(self.signal, open_archive)
        self.span = self.signal.get("span")
        # The question's words without the times it names: a date is a time to rank by
        # (freshness, the dated stage), not words to match ("2025", "06", "June" match other days).
        words = list(self.text)
        for s in self.signal["signals"]:
            if s["kind"] != "cue" and stands_alone(self.text, s["start"], s["end"]):
                words[s["start"] : s["end"]] = " " * (s["end"] - s["start"])
        self.words = "".join(words)

    def read_care(self, db, bridge, settings):
        """The deferred subjects and this search's Deference (time and care decided apart)."""
        self.deferred = [
            {"subject": r["subject"], "aliases": list(r["aliases"] or [])}
            for r in db.run(
                "deferred",
                "select subject, aliases from exo_private.deferred_subjects order by subject",
                [],
                [],
            )
        ]
        # An open archive releases a subject only when the question names it, unless the owner
        # chose the looser rule (deference.time_releases).
        self.time_releases = bool(settings.get("deference.time_releases", False))
        self.care = Deference(
            self.deferred, bridge, self.text, self.archive_open, self.archive_why, self.time_releases
        )

    def read_material(self, db, chosen, max_entities):
        """Entities the question names (per workspace, longest name first) that the search may
        show (one known only from withheld material is not recognised: the report would tell
        it exists), identifiers, content words, title keys and file keys."""
        released = self.care.released_keys_of_search()
        if released is None:  # every subject released: its names open it
            released = [n for s in self.deferred for n in [s["subject"], *s["aliases"]]]
        self.entities = {}
        for r in db.run(
            "entities",
            "with found as materialized ("
            "  select e.id, e.workspace, e.name, e.canonical_key from exo_private.entities e"
            "  where e.canonical_key = any ($1) and e.workspace = any ($2)"
            ") "
            "select f.id, f.workspace, f.name from found f "
            "where f.id in (select exo_private.entities_shown(array(select x.id from found x), $3)) "
            "order by f.workspace, length(f.canonical_key) desc, f.id",
            ["text[]", "text[]", "text[]"],
            [ngram_keys(self.text), chosen, released],
        ):
            found = self.entities.setdefault(r["workspace"], [])
            if len(found) < max_entities:
                found.append({"id": r["id"], "name": r["name"]})
        self.idents = identifiers(self.words)
        self.terms = content_words(self.words)
        self.titles = title_keys(self.text)
        self.files = file_keys(self.text)

    def temporal_report(self):
        return {
            "signal": self.signal["signal"],
            "opens_archive": self.signal["opens_archive"],
            "signals": [
                {"kind": s["kind"], "text": s["text"], "opens_archive": s["opens_archive"]}
                for s in self.signal["signals"]
            ],
            "years": self.signal["years"],
            "span": self.span,
        }

    def recognised_report(self):
        return {
            "identifiers": self.idents,
            "entities": {ws: [e["name"] for e in found] for ws, found in self.entities.items()},
        }
