"""Synthetic search corpus: documents, chunks, vectors and a graph in four workspaces.

A generator for search benchmarks: `build_corpus(conn, chunks)` fills a migrated,
empty database with a reproducible corpus and returns a CorpusInfo with the query
material a benchmark needs (identifiers that occur verbatim with the chunks that
hold them, entity names, topic phrases, paraphrase queries, an archival-only year).

  workspaces  technical 40 %, creative 20 %, personal 25 %, administrative 15 % of the
              chunks; documents of 3 to 10 chunks on one topic each, stage 'embedded',
              bands current 50 % / recent 20 % / archival 30 % with written_at to match;
              the first document of every topic is canonical
  text        English sentences from per-workspace templates and topic vocabularies:
              hosts (db-prod-03), tickets (INC-4242), invoices (INV-2020-00412) and
              policy numbers verbatim, so BM25 and exact matching find things
  deference   Walter Rivera (alias Grandpa Walter) on the deference list; about 1 % of
              the chunks name him next to a cue and are charged as ingestion would
              charge them, a few more name him without a cue and are not
  graph       Person, Org, Place and Topic entities per workspace (a name used in two
              workspaces is two entities), one extraction window per 6,000 characters,
              mentions wherever a name was written into a chunk, relations per document;
              the owner Sam Rivera is the hub, related to every entity mentioned
  vectors     a pool of about 3,000 distinct sentences is embedded once (`embed`, or
              seeded random unit vectors without it); a chunk's vector is the normalised
              sum of its sentences' vectors. The HNSW indexes are built after the load.

Everything is bulk-loaded with COPY: the documents in one transaction, then each workspace's
chunks and vectors on a connection of its own, `jobs` workspaces at a time, then the graph;
the HNSW indexes are built and `analyze` runs at the end. The same seed and as_of date give
the same corpus.

    .venv/bin/python -m bench.search_corpus [--chunks 10000] [--seed 7] [--jobs 2] [--real-embeddings] [--project-graph]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import itertools
import json
import random
import re
import socket
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from exocortex import config
from exocortex.db import admin_url, connect
from exocortex.models import services
from exocortex.ops.migrate import scratch_database
from exocortex.plpy import model_client as client
from exocortex.plpy.model_client import Endpoint

Embed = Callable[[list[str]], list[list[float]]]

MODEL = "all-MiniLM-L6-v2"
DIMENSIONS = 384
EMBED_BATCH = 128
WORKSPACE_SHARES = (("technical", 0.40), ("creative", 0.20), ("personal", 0.25), ("administrative", 0.15))
BAND_SHARES = (("current", 0.5), ("recent", 0.2), ("archival", 0.3))
#: Days back from as_of for each band, inside the banding.* settings (365, 1,095 days).
BAND_DAYS = {"current": (0, 360), "recent": (370, 1090), "archival": (1100, 1100 + 12 * 365)}
CHUNKS_PER_DOC = (3, 10)
POOL_PER_TOPIC = 120
WINDOW_CHARS, WINDOW_OVERLAP = 6000, 400
OWNER = "Sam Rivera"
DEFERRED = "Walter Rivera"
DEFERRED_ALIASES = ("Grandpa Walter",)
CHARGED_SHARE = 0.01
SOURCE_ROOT = "bench-search-corpus-seed-{seed}"

# -- vocabulary ------------------------------------------------------------------------------------
# Each workspace: slots shared by its templates, content templates ({p} is a topic phrase),
# topics (key phrases that occur verbatim, and paraphrase queries that share few words with
# them), entity templates ({person}, {person2}, {org}, {place}, {topic} are entity names),
# identifier templates, owner lines and title patterns. Content sentences hold no entity name,
# so mentions are exactly the names written through entity templates.

# fmt: off
FIRST = (
    "Maya", "Priya", "Tom", "Jonas", "Elena", "Omar", "Lucia", "Kenji", "Amara", "Felix", "Ines", "Dmitri",
    "Hannah", "Rafael", "Sofia", "Tariq", "Grace", "Mateo", "Yuki", "Nadia", "Oscar", "Leila", "Arjun",
    "Chloe", "Bruno", "Freya", "Idris", "Marta", "Nikolai", "Zoe", "Aidan", "Beatriz", "Caleb", "Dalia",
    "Emil", "Farah", "Gustav", "Hana", "Ivan", "Jade", "Kofi", "Lena", "Milo", "Noor", "Otto", "Paloma",
    "Quentin", "Rosa", "Stefan", "Talia", "Umar", "Vera", "Wesley", "Ximena", "Yara", "Zane", "Anika",
    "Bjorn", "Cyrus", "Delphine",
)
LAST = (
    "Chen", "Natarajan", "Okafor", "Berg", "Marsh", "Haddad", "Romano", "Tanaka", "Mensah", "Novak",
    "Duarte", "Petrov", "Schmidt", "Alvarez", "Rossi", "Khan", "Lindqvist", "Moreau", "Sato", "Farouk",
    "Quinn", "Nakamura", "Kowalski", "Osei", "Brennan", "Costa", "Dubois", "Eriksen", "Fischer", "Gallo",
    "Horvat", "Ibarra", "Jensen", "Kaur", "Larsen", "Mwangi", "Nilsson", "Ortega", "Park", "Reyes",
    "Silva", "Takahashi", "Ueda", "Vargas", "Wagner", "Xu", "Yilmaz", "Zielinski", "Abbott", "Blackwood",
    "Carver", "Dunn", "Ellison", "Frost", "Garrow", "Hale", "Ingram", "Juarez", "Keane", "Lowell",
)


@dataclass(frozen=True)
class Topic:
    name: str
    phrases: tuple[str, ...]
    queries: tuple[str, ...]
    templates: tuple[str, ...] = ()
    """Extra content templates of this topic only."""


@dataclass(frozen=True)
class Vocabulary:
    folder: str
    slots: dict[str, tuple[str, ...]]
    templates: tuple[str, ...]
    topics: tuple[Topic, ...]
    people: tuple[str, ...]
    """Names every corpus has in this workspace (shared with another workspace on purpose)."""
    orgs: tuple[str, ...]
    places: tuple[str, ...]
    subjects: tuple[str, ...]
    """Topic-type entities."""
    entity_templates: tuple[str, ...]
    id_templates: tuple[str, ...]
    owner_lines: tuple[str, ...]
    titles: tuple[str, ...]
    predicates: dict[str, tuple[str, ...]]
    """Owner-to-entity predicates by entity type; 'pair' for relations between people."""


VOCAB: dict[str, Vocabulary] = {
    "technical": Vocabulary(
        folder="work",
        slots={
            "env": ("primary", "reporting", "analytics", "billing", "search", "staging", "ledger"),
            "trend": ("climbed steadily", "spiked twice", "stayed flat", "recovered slowly",
                      "doubled overnight", "dropped back to normal", "kept oscillating"),
            "change": ("the nightly batch load", "the kernel upgrade", "the config reload",
                       "the schema migration", "the minor version bump", "the storage resize",
                       "the connection pool change"),
            "when": ("on Monday morning", "during the maintenance window", "right after midnight",
                     "over the weekend", "during peak traffic", "while the backup was running"),
            "action": ("added a dashboard panel", "opened a follow-up ticket", "wrote it up in the runbook",
                       "paged the on-call engineer", "rolled the change back", "left a note in the channel"),
        },
        templates=(
            "The {p} on the {env} cluster {trend} after {change}.",
            "We checked the {p} {when} and {action}.",
            "Nobody expected the {p} to matter until {change} went out.",
            "Our working theory is that {change} interacts badly with the {p}.",
            "I {action} because the {p} looked wrong {when}.",
            "The last time the {p} {trend}, it started on the {env} cluster.",
            "The {p} is the first thing to check {when}.",
            "After {change}, the {p} on {env} {trend}, so we {action}.",
        ),
        topics=(
            Topic("replication",
                  ("replication lag", "streaming replication", "hot standby", "replication slot",
                   "WAL receiver", "failover"),
                  ("why is the read replica falling behind the main database",
                   "the secondary server is minutes behind the leader",
                   "promoting a copy of the database after the main one went down"),
                  ("A stuck {p} keeps old WAL segments around and fills the disk.",)),
            Topic("vacuum",
                  ("autovacuum", "table bloat", "dead tuples", "transaction ID wraparound",
                   "vacuum freeze", "visibility map"),
                  ("deleted rows are never cleaned up and the tables keep growing",
                   "the background cleanup cannot keep up with all the updates"),
                  ("Long-running transactions hold back the {p} for hours.",)),
            Topic("backups",
                  ("base backup", "point-in-time recovery", "WAL archive", "restore drill",
                   "backup retention", "backup stanza"),
                  ("can we get the data back to how it was yesterday afternoon",
                   "proving that the nightly copies can actually be restored"),
                  ("An untested {p} is only a hope, not a backup.",)),
            Topic("query_tuning",
                  ("slow query", "sequential scan", "missing index", "query plan", "EXPLAIN ANALYZE",
                   "work_mem setting"),
                  ("the report page takes forever because the database reads every row",
                   "making a lookup faster with a better access path"),
                  ("The {p} showed most of the time went into sorting on disk.",)),
            Topic("deploys",
                  ("blue-green deploy", "rollback", "canary release", "feature flag", "release train",
                   "deploy pipeline"),
                  ("shipping a new version to a small share of users first",
                   "undoing a bad release quickly"),
                  ("The {p} took eleven minutes end to end.",)),
            Topic("networking",
                  ("TLS certificate", "load balancer", "DNS resolution", "packet loss", "connection timeout",
                   "firewall rule"),
                  ("the security certificate of the site expired",
                   "requests between services are randomly dropped"),
                  ("The {p} problem only showed up between availability zones.",)),
            Topic("monitoring",
                  ("disk usage alert", "CPU saturation", "on-call rotation", "latency dashboard",
                   "error budget", "pager fatigue"),
                  ("who gets woken up at night when something breaks",
                   "the machine is running out of storage space"),
                  ("The {p} fired four times before anyone looked at it.",)),
        ),
        people=("Maya Chen",),
        orgs=("Acme Cloud", "Northwind Hosting", "Bluefin Networks", "Helix Payments", "Orbital CDN",
              "Kestrel Security", "Lumen Analytics", "Pinecrest Data"),
        places=("Frankfurt", "Dublin", "Virginia", "Singapore", "Amsterdam", "Sao Paulo"),
        subjects=("PostgreSQL", "Patroni", "pgBackRest", "Kubernetes", "Terraform", "Prometheus",
                  "PgBouncer", "Debian"),
        entity_templates=(
            "{person} reviewed the change before it went out.",
            "{person} and {person2} paired on the fix for most of the afternoon.",
            "Escalated to {org} support; {person} owns the follow-up.",
            "The {place} region saw the same symptoms.",
            "We should ask {person} how {topic} behaves here.",
            "{person} suspects the {topic} settings, {person2} is not convinced.",
            "{org} confirmed a degradation in {place}.",
        ),
        id_templates=(
            "{host} showed the problem first.",
            "Tracked in {ticket}; the timeline is there.",
            "Failover moved traffic from {host} to {host2}.",
            "{ticket}: {host} ran out of connections.",
            "Checked the logs on {host} and {host2}, nothing unusual.",
        ),
        owner_lines=("Sam Rivera signed off on the rollout.", "Written up by Sam Rivera for the team."),
        titles=("Postmortem {ticket}: {p}", "Notes on {p} for {host}", "Runbook: {p}", "{p} investigation"),
        predicates={"Person": ("works with", "reviewed code of"), "Org": ("uses", "escalated to"),
                    "Place": ("runs servers in",), "Topic": ("maintains",), "pair": ("works with", "reports to")},
    ),
    "creative": Vocabulary(
        folder="writing",
        slots={
            "character": ("the keeper", "the girl", "the old sailor", "the widow", "the narrator",
                          "the stranger", "the ferryman"),
            "image": ("salt on the window glass", "a lantern swinging in the dark", "gulls over the breakwater",
                      "the smell of wet rope", "frost on the railing", "a letter nobody opened",
                      "a moth against the lamp"),
            "mood": ("quiet", "restless", "tender", "ominous", "bright", "weary", "strange"),
            "craftnote": ("cut the adverbs", "slow the pacing", "move the reveal earlier", "trust the silence",
                          "end on the image", "let the dialogue breathe", "keep the tense consistent"),
        },
        templates=(
            "In {p}, {character} notices {image}.",
            "The mood of {p} should feel {mood}, not sentimental.",
            "Note to self for {p}: {craftnote}.",
            "I rewrote {p} twice tonight and it finally reads {mood}.",
            "{character} keeps returning to {image} in {p}.",
            "Maybe {p} opens with {image} instead.",
            "For {p}, {craftnote} and see whether it still feels {mood}.",
        ),
        topics=(
            Topic("lighthouse_novel",
                  ("the lighthouse keeper", "the lantern room", "the storm chapter", "the keeper's logbook",
                   "the fog signal", "the tide tables"),
                  ("the book about a man who tends a light on a rocky island",
                   "the part of my novel where the weather turns violent at sea")),
            Topic("poems",
                  ("the villanelle", "the second stanza", "the closing couplet", "the sonnet draft",
                   "the refrain", "the line breaks"),
                  ("the verse I wrote with a repeating line", "rhyme scheme and form of my poetry")),
            Topic("short_story",
                  ("the cartographer", "the unfinished map", "the border town", "the night train",
                   "the missing brother", "the last page"),
                  ("the story about someone who draws maps of places",
                   "a tale of a sibling who vanished on a journey")),
            Topic("screenplay",
                  ("the kitchen scene", "the argument at dinner", "the voice-over", "the cold open",
                   "the final shot", "the stage directions"),
                  ("the film script where the family fights over a meal", "how the movie should begin")),
            Topic("craft",
                  ("the second draft", "point of view", "the opening line", "the narrative arc",
                   "the dialogue tags", "the writing workshop"),
                  ("advice on revising fiction", "whose eyes the story is told through")),
            Topic("worldbuilding",
                  ("the glass city", "the river guild", "the salt mines", "the festival of lamps",
                   "the old map", "the northern wall"),
                  ("the invented city and its customs", "a fantasy setting with miners and merchants")),
        ),
        people=(),
        orgs=("Harbour Guild", "Saltmarsh Press", "Northlight Review", "Lantern Theatre", "Gull Island Trust"),
        places=("Gull Island", "Port Avery", "Blackwater Point", "Kestrel Bay", "Lisbon"),
        subjects=("Maritime Folklore", "Cartography", "Epistolary Form", "Villanelle Form"),
        entity_templates=(
            "{person} stands at the window and says nothing for a long time.",
            "{person} and {person2} meet again at {place}.",
            "The {org} refuses to help {person}.",
            "Chapter notes: {person} should mention {place} earlier.",
            "Send the new pages to {org} by Friday.",
            "{person} reads about {topic} to understand {person2}.",
        ),
        id_templates=(),
        owner_lines=("Draft by Sam Rivera, not for circulation.", "Sam Rivera, working notes."),
        titles=("Draft: {p}", "Notes on {p}", "{p}, revision"),
        predicates={"Person": ("wrote about", "created"), "Org": ("submitted to",), "Place": ("set a story in",),
                    "Topic": ("researched",), "pair": ("loves", "distrusts", "is the sibling of")},
    ),
    "personal": Vocabulary(
        folder="diary",
        slots={
            "feeling": ("tired but happy", "restless", "grateful", "a bit low", "calm", "proud of myself",
                        "oddly nervous"),
            "time": ("This morning", "After work", "Tonight", "At lunch", "Before breakfast", "Late in the evening"),
            "weather": ("it rained all day", "the sun finally came out", "it was freezing", "the fog never lifted",
                        "it was warm and windy", "it snowed a little"),
            "small": ("made pancakes", "called my sister", "cleaned the kitchen", "read in bed", "fixed the bike",
                      "did the laundry", "watered the plants"),
        },
        templates=(
            "{time} I {small} and thought about {p}.",
            "Felt {feeling} after {p}; {weather}.",
            "{time} {weather}, so {p} moved to tomorrow.",
            "Still thinking about {p}, and honestly I feel {feeling}.",
            "{time} was mostly {p}, then I {small}.",
            "Writing this down so I remember {p}: {weather} and I felt {feeling}.",
        ),
        topics=(
            Topic("family",
                  ("family dinner", "mom's birthday", "the school play", "Sunday lunch", "the family group chat",
                   "dad's garden"),
                  ("time with my parents and siblings", "celebrating my mother getting older")),
            Topic("walks",
                  ("walked the dog", "the river trail", "the dog park", "a long hike", "the ridge path",
                   "the vet appointment"),
                  ("taking my pet out in nature", "going up the hills on foot")),
            Topic("health",
                  ("morning run", "sleep schedule", "the physio appointment", "knee pain", "yoga class",
                   "drinking more water"),
                  ("exercise and getting enough rest", "my leg hurting after jogging")),
            Topic("travel",
                  ("the coast trip", "the night ferry", "packing list", "the hostel", "dinner with friends",
                   "the airport delay"),
                  ("going on holiday by the sea", "a flight that was late")),
            Topic("cooking",
                  ("sourdough starter", "the tomato sauce", "meal prep", "the farmers market", "a new curry recipe",
                   "the burnt lasagna"),
                  ("baking bread at home", "what I cooked this week")),
            Topic("home",
                  ("the leaky faucet", "repainting the hallway", "the balcony plants", "the new bookshelf",
                   "the noisy neighbours", "spring cleaning"),
                  ("fixing things around the flat", "the people next door making noise")),
        ),
        people=("Maya Chen", "Jonas Berg"),
        orgs=("Boulder Barn", "Riverside Running Club", "Greenleaf Vet Clinic", "Corner Bakery", "City Library"),
        places=("Lisbon", "Riverside Park", "Mount Tam", "Porto", "Lake Ellery", "Brighton"),
        subjects=("Sourdough", "Marathon Training", "Birdwatching", "Pottery"),
        entity_templates=(
            "Had coffee with {person} at {place}.",
            "{person} called about the weekend plans.",
            "{person} and {person2} came over for dinner.",
            "Ran into {person} from {org} on the way home.",
            "{person} keeps talking about {topic}; maybe I will try it.",
            "Booked something at {org} for next week.",
        ),
        id_templates=(),
        owner_lines=("Note to future Sam Rivera: slow down.", "Sam Rivera, trying to keep this diary going."),
        titles=("Diary: {p}", "Journal, {p}", "{p}"),
        predicates={"Person": ("spent time with", "is friends with"), "Org": ("is a member of",),
                    "Place": ("visited",), "Topic": ("is interested in",), "pair": ("is married to", "knows")},
    ),
    "administrative": Vocabulary(
        folder="admin",
        slots={
            "status": ("was paid", "is still outstanding", "is due at the end of the month", "was disputed",
                       "went out by direct debit", "needs a signature"),
            "doc": ("the PDF", "the paper copy", "the confirmation email", "the scanned receipt",
                    "the reminder letter"),
            "action": ("filed it in the finance folder", "set a calendar reminder", "called the helpline",
                       "updated the spreadsheet", "forwarded it to the accountant", "paid it online"),
            "when": ("last Tuesday", "before the weekend", "this morning", "at the start of the month"),
        },
        templates=(
            "The {p} {status}; I {action}.",
            "Found {doc} for the {p} and {action}.",
            "Reminder: the {p} {status}.",
            "Checked the {p} against {doc} {when}.",
            "The {p} {status}, according to {doc}.",
            "{when}, I {action} for the {p}.",
        ),
        topics=(
            Topic("invoices",
                  ("invoice", "payment reminder", "late fee", "bank transfer", "billing address", "payment terms"),
                  ("a supplier wants their money", "charged extra for paying after the deadline")),
            Topic("tax",
                  ("tax return", "deductible expenses", "quarterly estimated tax", "tax office", "filing deadline",
                   "withholding statement"),
                  ("paperwork for the government about my income", "what can I write off this year")),
            Topic("insurance",
                  ("insurance premium", "home insurance policy", "claim form", "policy renewal", "excess amount",
                   "car insurance"),
                  ("getting reimbursed after water damage", "how much cover costs per year")),
            Topic("housing",
                  ("lease renewal", "security deposit", "rent increase", "landlord's letter", "service charge",
                   "meter reading"),
                  ("the flat contract is ending", "getting my deposit back when I move out")),
            Topic("banking",
                  ("pension contribution", "bank statement", "savings account", "standing order", "interest rate",
                   "credit card statement"),
                  ("money put aside for retirement", "monthly overview of my account")),
            Topic("utilities",
                  ("electricity bill", "broadband contract", "water bill", "phone plan", "gym membership",
                   "streaming subscription"),
                  ("cancelling services I no longer use", "energy costs went up")),
        ),
        people=("Jonas Berg",),
        orgs=("Northwind Insurance", "Cedar Property Management", "First Harbor Bank", "City Water and Power",
              "Regional Tax Office", "Brightline Broadband", "Meridian Pensions"),
        places=("Dublin", "Leeds", "Rotterdam", "Harbour Street"),
        subjects=("VAT", "Council Tax", "Home Insurance", "Pension Planning"),
        entity_templates=(
            "Letter from {org} about the account.",
            "{person} at {org} confirmed the details by phone.",
            "The {org} office in {place} sent a copy.",
            "Asked {person} whether {topic} applies to me.",
            "{person} and {person2} both need to sign.",
        ),
        id_templates=(
            "Invoice {invoice} from {org} for {amount}.",
            "Reference {invoice}, amount {amount}.",
            "Policy number {policy} with {org}.",
            "Quote {policy} when calling about {invoice}.",
        ),
        owner_lines=("Account holder: Sam Rivera.", "Sam Rivera, customer since the start."),
        titles=("{org}: {p}", "Invoice {invoice}", "{p} paperwork", "{p} {year}"),
        predicates={"Person": ("deals with", "is advised by"), "Org": ("is a customer of", "pays"),
                    "Place": ("has an address in",), "Topic": ("pays",), "pair": ("works with",)},
    ),
}
HOST_ROLES = ("db", "app", "cache", "queue", "web", "etl")
HOST_ENVS = ("prod", "stage")
HOSTS_PER_ROLE = 8
TICKET_PREFIXES = ("INC", "CHG", "PRB")
TICKET_NUMBERS = range(2101, 10000)  # never a year in this corpus
#: Numbers of the tickets past the first 23,697 (a technical workspace of more than about 150,000 chunks).
MORE_TICKET_NUMBERS = range(10000, 100000)
#: Fillers of the generic rendering that stands for every sentence of an entity or identifier template.
EXAMPLES = {"host": "db-prod-01", "host2": "db-prod-02", "ticket": "INC-4242", "invoice": "INV-2024-0001",
            "policy": "POL-100200", "amount": "312.40", "person": "a colleague", "person2": "another colleague",
            "org": "the company", "place": "the city", "topic": "the tool"}  # fmt: skip

DEFERENCE_LINES = {
    "personal": (
        "The funeral for Walter Rivera is on Saturday and I still have not written the eulogy.",
        "Sat with Walter Rivera at the hospice this afternoon; he slept most of the time.",
        "The doctor explained the diagnosis to Walter Rivera slowly, twice.",
        "Grandpa Walter, Walter Rivera to everyone else, passed away early this morning.",
        "I miss him so much. Walter Rivera would have laughed at all of this.",
    ),
    "administrative": (
        "Invoice from the funeral home for the service of Walter Rivera.",
        "Condolences letter from the bank about the account of Walter Rivera.",
        "Death certificate copies for Walter Rivera arrived by post.",
    ),
}
UNCHARGED_LINES = (
    "Found an old photo of Walter Rivera fishing at the lake.",
    "Grandpa Walter taught me to play chess on that green board.",
)
# fmt: on


@dataclass
class CorpusInfo:
    """What build_corpus made, and query material whose answers are known."""

    seed: int
    as_of: date
    chunks: int
    documents: int
    chunks_by_workspace: dict[str, int]
    entities: int
    mentions: int
    relations: int
    windows: int
    model_id: int
    dimensions: int
    vectors: str
    """'embed' (the pool went through the embed function) or 'random' (seeded unit vectors)."""
    pool_sentences: int
    identifiers: dict[str, list[int]]
    """A sample of verbatim identifiers (hosts, tickets, invoices, policy numbers) -> every chunk id holding it."""
    entity_names: dict[str, list[str]]
    """Workspace -> its entity names, most mentioned first."""
    shared_entity_names: list[str]
    """Names that are an entity (a different one) in two or more workspaces."""
    owner: str
    owner_entities: dict[str, int]
    """Workspace -> the owner's entity id: the hub of that workspace's graph."""
    deferred_subject: str
    deferred_aliases: list[str]
    charged_chunk_ids: list[int]
    uncharged_deferred_chunk_ids: list[int]
    """Chunks naming the deferred subject without a cue: not charged."""
    topic_phrases: dict[str, list[str]]
    """Workspace -> key phrases that occur verbatim (documents.metadata->>'topic' says whose)."""
    semantic_queries: list[tuple[str, str, str]]
    """(query, workspace, topic): paraphrases sharing few words with the topic's text."""
    archival_year: int
    """A year written only in archival chunks (dates, invoice numbers) and only archival written_at."""
    archival_year_chunk_ids: list[int]
    timings: dict[str, float] = field(default_factory=dict)
    build_s: float = 0.0


# -- text ------------------------------------------------------------------------------------------


@dataclass
class Sentence:
    text: str
    vec: int
    """Index into the embedded pool."""
    entities: tuple[int, ...] = ()
    """Local entity indices named in the text."""
    ids: tuple[str, ...] = ()
    """Identifiers written verbatim."""


@dataclass
class Entity:
    workspace: str
    type: str
    name: str
    weight: float
    index: int = -1
    mentions: int = 0


class Pool:
    """Distinct texts to embed once; sentences point at them by index."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.index: dict[str, int] = {}

    def add(self, text: str) -> int:
        if text not in self.index:
            self.index[text] = len(self.texts)
            self.texts.append(text)
        return self.index[text]


def fill(template: str, rng: random.Random, slots: dict[str, Sequence[str]], **fixed: str) -> str:
    """The template with every {slot} filled: from `fixed`, else a random choice of `slots`;
    capitalised, unless it starts with a host name (identifiers stay verbatim)."""
    text = re.sub(r"\{(\w+)\}", lambda m: fixed[m[1]] if m[1] in fixed else rng.choice(slots[m[1]]), template)
    return text if template.startswith("{host") else text[0].upper() + text[1:]


def phrase_pattern(words: str) -> re.Pattern[str]:
    """plpy/deference.py's name and cue pattern: whole words, any whitespace, case-insensitive."""
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words.split()) + r"(?!\w)", re.I)


def split(total: int, shares: Sequence[tuple[str, float]]) -> dict[str, int]:
    """Integer parts of total by share; the rounding remainder goes to the first."""
    parts = {name: int(total * share) for name, share in shares}
    parts[shares[0][0]] += total - sum(parts.values())
    return parts


def doc_sizes(total: int, rng: random.Random) -> list[int]:
    """Chunks per document, 3 to 10 each (fewer only when total itself is under 3)."""
    low, high = CHUNKS_PER_DOC
    sizes, left = [], total
    while left > 0:
        n = min(rng.randint(low, high), left)
        if 0 < left - n < low:
            n = left if left <= high else left - low
        sizes.append(n)
        left -= n
    return sizes


# -- generation ------------------------------------------------------------------------------------


@dataclass
class Doc:
    index: int
    workspace: str
    topic: Topic
    band: str
    written_at: date
    title: str
    path: str
    canonical: bool
    chunks: list[int]
    """Global chunk indices."""
    text: str = ""
    windows: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Chunk:
    index: int
    doc: int
    workspace: str
    ordinal: int
    body: str
    char_start: int
    char_end: int
    vecs: list[int]
    entities: set[int]
    charged: list[dict[str, str]]


class Generator:
    def __init__(self, total: int, seed: int, as_of: date, cues: Sequence[str]):
        self.rng = random.Random(seed)
        self.seed = seed
        self.as_of = as_of
        self.cues = [(cue, phrase_pattern(cue)) for cue in cues]
        self.names = [(n, phrase_pattern(n)) for n in (DEFERRED, *DEFERRED_ALIASES)]
        self.pool = Pool()
        self.content: dict[tuple[str, str], list[int]] = {}
        self.entities: list[Entity] = []
        self.by_type: dict[tuple[str, str], list[int]] = {}
        self.cum_weights: dict[tuple[str, str], list[float]] = {}
        self.docs: list[Doc] = []
        self.chunks: list[Chunk] = []
        self.identifiers: dict[str, list[int]] = {}
        self.id_kinds: dict[str, str] = {}
        self.archival_year = as_of.year - 6
        self.per_workspace = split(total, WORKSPACE_SHARES)
        self.hosts = [
            f"{r}-{e}-{i:02d}" for r in HOST_ROLES for e in HOST_ENVS for i in range(1, HOSTS_PER_ROLE + 1)
        ]
        tickets = [f"{p}-{n}" for p in TICKET_PREFIXES for n in TICKET_NUMBERS]
        self.rng.shuffle(tickets)
        # Drawn only when the four-digit ones run out, so a smaller corpus is the same as before.
        more = (f"{p}-{n}" for n in MORE_TICKET_NUMBERS for p in TICKET_PREFIXES)
        self.tickets = itertools.chain(tickets, more)
        self.invoice_serial = 0

    # The pool: content sentences per topic, and one generic rendering per other template.
    def build_pool(self) -> None:
        for ws, vocab in VOCAB.items():
            for topic in vocab.topics:
                templates = vocab.templates + topic.templates
                seen: set[str] = set()
                attempts = 0
                while len(seen) < POOL_PER_TOPIC and attempts < POOL_PER_TOPIC * 20:
                    attempts += 1
                    seen.add(
                        fill(
                            self.rng.choice(templates),
                            self.rng,
                            vocab.slots,
                            p=self.rng.choice(topic.phrases),
                        )
                    )
                self.content[ws, topic.name] = [self.pool.add(t) for t in sorted(seen)]
            for template in (*vocab.entity_templates, *vocab.id_templates):
                self.pool.add(fill(template, self.rng, {}, **EXAMPLES))
            for line in (*vocab.owner_lines, *DEFERENCE_LINES.get(ws, ())):
                self.pool.add(line)
        for line in UNCHARGED_LINES:
            self.pool.add(line)

    def build_entities(self) -> None:
        combos = [f"{f} {last}" for f in FIRST for last in LAST]
        for ws, vocab in VOCAB.items():
            wanted = max(12, min(len(combos) // 2, self.per_workspace[ws] // 30))
            people = list(vocab.people) + [
                n for n in self.rng.sample(combos, wanted) if n not in vocab.people
            ]
            for typ, names in (("Person", people), ("Org", vocab.orgs), ("Place", vocab.places),
                               ("Topic", vocab.subjects)):  # fmt: skip
                members = self.by_type.setdefault((ws, typ), [])
                for rank, name in enumerate(names):
                    members.append(len(self.entities))
                    self.entities.append(Entity(ws, typ, name, 1.0 / (rank + 1) ** 0.8))
                self.cum_weights[ws, typ] = list(
                    itertools.accumulate(self.entities[m].weight for m in members)
                )

    def pick(self, ws: str, typ: str, k: int) -> list[int]:
        members = self.by_type[ws, typ]
        chosen: list[int] = []
        for e in self.rng.choices(members, cum_weights=self.cum_weights[ws, typ], k=k * 3):
            if e not in chosen:
                chosen.append(e)
        return chosen[:k] or members[:1]

    def build_documents(self) -> None:
        charged_total = max(1, round(CHARGED_SHARE * sum(self.per_workspace.values())))
        charged_personal = (
            round(charged_total * 0.75) if self.per_workspace["administrative"] else charged_total
        )
        charge_plan = {
            "personal": set(self.rng.sample(range(self.per_workspace["personal"]),
                                            min(charged_personal, self.per_workspace["personal"]))),
            "administrative": set(self.rng.sample(range(self.per_workspace["administrative"]),
                                                  min(charged_total - charged_personal,
                                                      self.per_workspace["administrative"]))),
        }  # fmt: skip
        uncharged_plan = set(self.rng.sample(range(self.per_workspace["personal"]),
                                             min(max(1, charged_total // 4), self.per_workspace["personal"])))  # fmt: skip
        for ws, vocab in VOCAB.items():
            seen_topics: set[str] = set()
            position = 0
            for size in doc_sizes(self.per_workspace[ws], self.rng):
                topic = self.rng.choice(vocab.topics)
                canonical = topic.name not in seen_topics
                seen_topics.add(topic.name)
                band = "current" if canonical else self.rng.choices(*zip(*BAND_SHARES, strict=True))[0]
                lo, hi = BAND_DAYS[band]
                if band == "archival" and self.rng.random() < 0.12:  # a fair share in the archival year
                    first, last = date(self.archival_year, 1, 1), date(self.archival_year, 12, 31)
                    written = first + timedelta(days=self.rng.randint(0, (last - first).days))
                else:
                    written = self.as_of - timedelta(days=self.rng.randint(lo, hi))
                plan = [
                    ("charged" if position + i in charge_plan.get(ws, ()) else
                     "uncharged" if ws == "personal" and position + i in uncharged_plan else "")
                    for i in range(size)
                ]  # fmt: skip
                position += size
                self.make_document(ws, vocab, topic, band, written, canonical, plan)

    def make_document(
        self,
        ws: str,
        vocab: Vocabulary,
        topic: Topic,
        band: str,
        written: date,
        canonical: bool,
        plan: list[str],
    ) -> None:
        rng = self.rng
        cast = {
            "person": self.pick(ws, "Person", 4),
            "org": self.pick(ws, "Org", 2),
            "place": self.pick(ws, "Place", 1),
            "topic": self.pick(ws, "Topic", 2),
        }
        ids: dict[str, str] = {}
        if ws == "technical":
            ids["host"], ids["host2"] = rng.sample(self.hosts, 2)
            ids["ticket"] = next(self.tickets)
        elif ws == "administrative":
            self.invoice_serial += 1
            ids["invoice"] = f"INV-{written.year}-{self.invoice_serial:05d}"
            ids["policy"] = f"POL-{rng.randint(100000, 999999)}"
        names = {k: self.entities[v[0]].name for k, v in cast.items()}
        template = rng.choice(vocab.titles)
        title = fill(template, rng, {}, p=rng.choice(topic.phrases), year=str(written.year), **names, **ids)
        header_entities = {v[0] for k, v in cast.items() if "{" + k + "}" in template}
        if canonical:
            title = f"{title} (reference)"
        doc = Doc(
            index=len(self.docs), workspace=ws, topic=topic, band=band, written_at=written, title=title,
            path=f"{vocab.folder}/{topic.name}/{written.isoformat()}-{len(self.docs):06d}.md",
            canonical=canonical, chunks=[],
        )  # fmt: skip
        self.docs.append(doc)
        header = f"# {title}\n\n{written:%A} {written.day} {written:%B %Y}\n\n"
        header_ids = tuple(v for v in ids.values() if v in title)
        offset = 0
        bodies = []
        for ordinal, mark in enumerate(plan):
            sentences = self.chunk_sentences(ws, vocab, topic, cast, ids, ordinal, mark)
            rng_pars = rng.randint(2, 3)
            cuts = sorted(rng.sample(range(1, len(sentences)), rng_pars - 1))
            paragraphs = [sentences[a:b] for a, b in zip([0, *cuts], [*cuts, len(sentences)], strict=True)]
            body = "\n\n".join(" ".join(s.text for s in par) for par in paragraphs)
            found_ids = [i for s in sentences for i in s.ids]
            entities = {e for s in sentences for e in s.entities}
            if ordinal == 0:
                body = header + body
                found_ids.extend(header_ids)
                entities |= header_entities
            chunk = Chunk(
                index=len(self.chunks), doc=doc.index, workspace=ws, ordinal=ordinal, body=body,
                char_start=offset, char_end=offset + len(body), vecs=[s.vec for s in sentences],
                entities=entities, charged=[],
            )  # fmt: skip
            if mark:
                chunk.charged = self.charged_marks(body)
            for ident in dict.fromkeys(found_ids):
                self.identifiers.setdefault(ident, []).append(chunk.index)
            self.chunks.append(chunk)
            doc.chunks.append(chunk.index)
            bodies.append(body)
            offset += len(body) + 2
        doc.text = "\n\n".join(bodies)
        start = 0
        while True:
            end = min(start + WINDOW_CHARS, len(doc.text))
            doc.windows.append((start, end))
            if end >= len(doc.text):
                break
            start = end - WINDOW_OVERLAP

    def chunk_sentences(
        self, ws: str, vocab: Vocabulary, topic: Topic, cast: dict[str, list[int]], ids: dict[str, str],
        ordinal: int, mark: str,
    ) -> list[Sentence]:  # fmt: skip
        rng = self.rng
        sentences = []
        for _ in range(rng.randint(5, 8)):
            other = rng.random() < 0.15
            pool = self.content[ws, rng.choice(vocab.topics).name if other else topic.name]
            vec = rng.choice(pool)
            sentences.append(Sentence(self.pool.texts[vec], vec))
        extras: list[Sentence] = []
        if rng.random() < 0.7:
            template = rng.choice(vocab.entity_templates)
            generic = self.pool.index[fill(template, rng, {}, **EXAMPLES)]
            people = rng.sample(cast["person"], 2) if len(cast["person"]) > 1 else cast["person"] * 2
            chosen = {
                "person": people[0],
                "person2": people[1],
                "org": rng.choice(cast["org"]),
                "place": cast["place"][0],
                "topic": rng.choice(cast["topic"]),
            }
            if people[0] == people[1]:
                template = template.replace("{person2}", "a colleague")
            used = {k: v for k, v in chosen.items() if "{" + k + "}" in template}
            text = fill(template, rng, {}, **{k: self.entities[v].name for k, v in used.items()})
            extras.append(Sentence(text, generic, tuple(dict.fromkeys(used.values()))))
        if vocab.id_templates and (ordinal == 0 or rng.random() < 0.35):
            template = rng.choice(vocab.id_templates)
            org = rng.choice(cast["org"])
            fixed = {
                **ids,
                "amount": f"{rng.randint(12, 2400):,}.{rng.randint(0, 99):02d}",
                "org": self.entities[org].name,
            }
            text = fill(template, rng, {}, **fixed)
            generic = self.pool.index[fill(template, rng, {}, **EXAMPLES)]
            written_ids = tuple(v for k, v in ids.items() if "{" + k + "}" in template)
            extras.append(Sentence(text, generic, (org,) if "{org}" in template else (), written_ids))
        if rng.random() < 0.12:
            line = rng.choice(vocab.owner_lines)
            extras.append(Sentence(line, self.pool.index[line], (-1,)))  # -1: the owner
        if mark == "charged":
            line = rng.choice(DEFERENCE_LINES[ws])
            extras.append(Sentence(line, self.pool.index[line]))
        elif mark == "uncharged":
            line = rng.choice(UNCHARGED_LINES)
            extras.append(Sentence(line, self.pool.index[line]))
        for extra in extras:
            sentences.insert(rng.randint(0, len(sentences)), extra)
        return sentences

    def charged_marks(self, text: str) -> list[dict[str, str]]:
        """The marks ingestion would give: a name of the subject and a cue in the same chunk."""
        name = next((n for n, p in self.names if p.search(text)), None)
        cue = next((c for c, p in self.cues if p.search(text)), None)
        if name is None or cue is None:
            return []
        return [{"subject": DEFERRED, "rule": f"cue '{cue}' with '{name}'"}]

    def generate(self) -> None:
        self.build_pool()
        self.build_entities()
        self.build_documents()
        for chunk in self.chunks:
            for e in chunk.entities:
                if e >= 0:
                    self.entities[e].mentions += 1


# -- vectors ---------------------------------------------------------------------------------------


def pool_vectors(texts: list[str], embed: Embed | None, seed: int) -> np.ndarray:
    """Unit vectors of the pool: through embed in batches, or seeded random ones."""
    if embed is None:
        vectors = np.random.default_rng(seed).standard_normal((len(texts), DIMENSIONS)).astype(np.float32)
    else:
        rows: list[list[float]] = []
        for i in range(0, len(texts), EMBED_BATCH):
            rows.extend(embed(texts[i : i + EMBED_BATCH]))
        vectors = np.asarray(rows, dtype=np.float32)
        if vectors.shape != (len(texts), DIMENSIONS):
            raise ValueError(
                f"embed returned vectors of shape {vectors.shape}; {MODEL} has {DIMENSIONS} dimensions"
            )
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def chunk_vectors(chunks: list[Chunk], pool: np.ndarray) -> np.ndarray:
    """Each chunk's vector: the normalised sum of its sentences' pool vectors."""
    lengths = np.fromiter((len(c.vecs) for c in chunks), dtype=np.int64, count=len(chunks))
    flat = np.fromiter((v for c in chunks for v in c.vecs), dtype=np.int64, count=int(lengths.sum()))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    out = np.empty((len(chunks), pool.shape[1]), dtype=np.float32)
    step = 8192
    for a in range(0, len(chunks), step):
        b = min(a + step, len(chunks))
        lo, hi = starts[a], starts[b - 1] + lengths[b - 1]
        out[a:b] = np.add.reduceat(pool[flat[lo:hi]], starts[a:b] - lo, axis=0)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


# -- loading ---------------------------------------------------------------------------------------


def reserve_ids(conn: psycopg.Connection, table: str, n: int) -> list[int]:
    """n values of a table's identity sequence, for rows COPY writes with explicit ids."""
    if n == 0:
        return []
    return [
        r[0]
        for r in conn.execute(
            "select nextval(pg_get_serial_sequence(%s, 'id')) from generate_series(1, %s)", (table, n)
        )
    ]


def predicate_label(raw: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", raw.upper()).strip("_")


def build_corpus(
    conn: psycopg.Connection,
    chunks: int,
    seed: int = 7,
    embed: Embed | None = None,
    *,
    as_of: date | None = None,
    project_graph: bool = False,
    jobs: int = 1,
    maintenance_work_mem: str | None = None,
) -> CorpusInfo:
    """Fill a freshly migrated database with the synthetic corpus; returns what it made.

    `embed` maps texts to 384-dimension vectors (MiniLM); it is called on the sentence
    pool only (about 3,000 short texts, batches of 128), before any transaction opens.
    `as_of` (default: the server's current_date) anchors written_at and the bands.
    `project_graph` also projects every entity and relation into the AGE graphs.
    `jobs` workspaces load at a time, each on its own connection to conn's database, which
    builds the workspace's HNSW index with `maintenance_work_mem` (default: the server's).
    """
    if chunks < 1:
        raise ValueError("chunks must be at least 1")
    timings: dict[str, float] = {}
    began = time.perf_counter()
    mark = began

    def lap(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        timings[name] = round(now - mark, 2)
        mark = now

    root = SOURCE_ROOT.format(seed=seed)
    if conn.execute("select 1 from exo_private.sources where root = %s", (root,)).fetchone():
        raise ValueError(f"the database already holds a corpus of seed {seed} (source {root})")
    if as_of is None:
        as_of = conn.execute("select current_date").fetchone()[0]
    cues = conn.execute("select value from exo_private.settings where key = 'deference.cues'").fetchone()[0]
    chat_model = conn.execute("select value ->> 'model' from exo_private.settings where key = 'models.chat'").fetchone()[0]  # fmt: skip
    gen = Generator(chunks, seed, as_of, cues)
    gen.generate()
    lap("generate text")
    pool = pool_vectors(gen.pool.texts, embed, seed)
    vectors = chunk_vectors(gen.chunks, pool)
    lap("embed pool" if embed else "random vectors")

    with conn.transaction():
        conn.execute(
            "select exo_private.defer_subject(%s, %s, 'synthetic search corpus')",
            (DEFERRED, list(DEFERRED_ALIASES)),
        )
        conn.execute("select exo_private.set_owner(%s)", (OWNER,))
        generation = {
            ws: conn.execute("select exo_private.current_generation(%s, %s)", (ws, chat_model)).fetchone()[0]
            for ws in VOCAB
        }
        owner_entities = dict(
            conn.execute(
                "select workspace, id from exo_private.entities where is_owner and workspace = any(%s)",
                (list(VOCAB),),
            ).fetchall()
        )
        partitions = {
            ws: conn.execute("select exo_private.ensure_workspace_storage(%s)::text", (ws,)).fetchone()[0]
            for ws in VOCAB
        }
        model_id = conn.execute(
            "select exo_private.embedding_model_id(%s, %s)", (MODEL, DIMENSIONS)
        ).fetchone()[0]
        # Registering a model builds its (empty) HNSW indexes; each is built again after its workspace loads.
        hnsw: dict[str, str] = {}
        for ws, index, definition in conn.execute(
            """select pg_get_expr(p.relpartbound, p.oid), format('%%I.%%I', n.nspname, c.relname),
                      pg_get_indexdef(x.indexrelid)
               from pg_inherits i
               join pg_class p on p.oid = i.inhrelid
               join pg_index x on x.indrelid = i.inhrelid
               join pg_class c on c.oid = x.indexrelid
               join pg_namespace n on n.oid = c.relnamespace
               join pg_am a on a.oid = c.relam
               where i.inhparent = 'exo_private.chunk_embeddings'::regclass and a.amname = 'hnsw'
                 and pg_get_expr(x.indpred, x.indrelid) = format('(model_id = %%s)', %s::int)""",
            (model_id,),
        ).fetchall():
            hnsw[re.fullmatch(r"FOR VALUES IN \('(.+)'\)", ws)[1]] = definition
            conn.execute(f"drop index {index}")
        source = conn.execute(
            "insert into exo_private.sources (root) values (%s) returning id", (root,)
        ).fetchone()[0]

        doc_ids = reserve_ids(conn, "exo_private.documents", len(gen.docs))
        chunk_ids = np.array(reserve_ids(conn, "exo_private.chunks", len(gen.chunks)), dtype=np.int64)
        window_ids = iter(
            reserve_ids(conn, "exo_private.extraction_windows", sum(len(d.windows) for d in gen.docs))
        )
        mentioned = [e for e in gen.entities if e.mentions]
        for e, eid in zip(mentioned, reserve_ids(conn, "exo_private.entities", len(mentioned)), strict=True):
            e.index = eid
        lap("setup")

        with conn.cursor().copy(
            "copy exo_private.documents (id, source_id, path, path_bytes, extension, size_bytes, mtime_ns, sha256, stage, "
            "workspace, band, band_source, band_reason, written_at, title, canonical, metadata) from stdin"
        ) as copy:
            for d, did in zip(gen.docs, doc_ids, strict=True):
                data = d.text.encode()
                mtime = int(time.mktime(d.written_at.timetuple())) * 1_000_000_000
                copy.write_row((
                    did, source, d.path, d.path.encode(), "md", len(data), mtime, hashlib.sha256(data).hexdigest(), "embedded",
                    d.workspace, d.band, "inferred", f"written {d.written_at.isoformat()}", d.written_at, d.title,
                    d.canonical, json.dumps({"synthetic": True, "seed": seed, "topic": d.topic.name}),
                ))  # fmt: skip
        lap("copy documents")

    def load_workspace(ws: str) -> None:
        """A workspace's chunks (its BM25 indexes maintained) and their vectors, on a connection of its own."""
        members = [c for c in gen.chunks if c.workspace == ws]
        with psycopg.connect(conn.info.dsn, password=conn.info.password, autocommit=True) as own:
            register_vector(own)  # pgvector's adapter: numpy rows go out in the vector type's binary form
            with own.transaction():
                with own.cursor().copy(
                    f"copy {partitions[ws]} (id, workspace, document_id, ordinal, body, char_start, char_end, "
                    "band, written_at, charged_subjects, charged) from stdin"
                ) as copy:
                    for c in members:
                        d = gen.docs[c.doc]
                        copy.write_row((
                            int(chunk_ids[c.index]), ws, doc_ids[c.doc], c.ordinal, c.body, c.char_start,
                            c.char_end, d.band, d.written_at, [m["subject"] for m in c.charged], json.dumps(c.charged),
                        ))  # fmt: skip
                with own.cursor().copy(
                    "copy exo_private.chunk_embeddings (workspace, chunk_id, model_id, embedding) "
                    "from stdin (format binary)"
                ) as copy:
                    copy.set_types(["text", "int8", "int4", "vector"])
                    indices = np.array([c.index for c in members], dtype=np.int64)
                    for chunk_id, vector in zip(chunk_ids[indices].tolist(), vectors[indices], strict=True):
                        copy.write_row((ws, chunk_id, model_id, vector))
            if maintenance_work_mem:
                own.execute("select set_config('maintenance_work_mem', %s, false)", (maintenance_work_mem,))
            own.execute(hnsw[ws])

    # The workspaces load side by side: the server maintains each partition's BM25 indexes and
    # builds its HNSW index in the workspace's own backend, which is most of the load's time.
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as workers:
        list(workers.map(load_workspace, list(VOCAB)))
    lap(f"copy chunks and vectors, build HNSW indexes ({max(1, jobs)} workspaces at a time, BM25 maintained)")

    with conn.transaction():
        chunk_window: dict[int, int] = {}
        with conn.cursor().copy(
            "copy exo_private.extraction_windows (id, document_id, workspace, ordinal, body, char_start, char_end) "
            "from stdin"
        ) as copy:
            for d in gen.docs:
                wids = []
                for ordinal, (a, b) in enumerate(d.windows):
                    wid = next(window_ids)
                    wids.append((a, b, wid))
                    copy.write_row((wid, doc_ids[d.index], d.workspace, ordinal, d.text[a:b], a, b))
                for ci in d.chunks:
                    start = gen.chunks[ci].char_start
                    chunk_window[ci] = next(w for a, b, w in wids if a <= start < b)

        with conn.cursor().copy(
            "copy exo_private.entities (id, workspace, generation, type, canonical_key, name) from stdin"
        ) as copy:
            for e in mentioned:
                copy.write_row(
                    (e.index, e.workspace, generation[e.workspace], e.type, e.name.casefold(), e.name)
                )

        def entity_id(local: int, ws: str) -> int:
            return owner_entities[ws] if local < 0 else gen.entities[local].index

        mention_count = 0
        with conn.cursor().copy(
            "copy exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface) from stdin"
        ) as copy:
            for c in gen.chunks:
                for local in sorted(c.entities):
                    name = OWNER if local < 0 else gen.entities[local].name
                    copy.write_row((entity_id(local, c.workspace), chunk_window[c.index], doc_ids[c.doc],
                                    int(chunk_ids[c.index]), name))  # fmt: skip
                    mention_count += 1

        relations: dict[tuple[int, str, int, int], tuple[str, str, int]] = {}
        rel_rng = random.Random(seed + 1)
        for d in gen.docs:
            vocab = VOCAB[d.workspace]
            first_window: dict[int, int] = {}
            for ci in d.chunks:
                for local in gen.chunks[ci].entities:
                    if local >= 0:
                        first_window.setdefault(local, chunk_window[ci])
            hub = owner_entities[d.workspace]
            for local, wid in first_window.items():
                raw = rel_rng.choice(vocab.predicates[gen.entities[local].type])
                relations[hub, predicate_label(raw), gen.entities[local].index, wid] = (
                    d.workspace,
                    raw,
                    doc_ids[d.index],
                )
            people = sorted(e for e in first_window if gen.entities[e].type == "Person")
            for _ in range(min(2, len(people) - 1)):
                a, b = rel_rng.sample(people, 2)
                raw = rel_rng.choice(vocab.predicates["pair"])
                key = (gen.entities[a].index, predicate_label(raw), gen.entities[b].index, first_window[a])
                relations[key] = (d.workspace, raw, doc_ids[d.index])
        with conn.cursor().copy(
            "copy exo_private.relations (workspace, generation, subject_id, predicate_raw, predicate, object_id, "
            "window_id, document_id) from stdin"
        ) as copy:
            for (s, p, o, w), (ws, raw, did) in relations.items():
                copy.write_row((ws, generation[ws], s, raw, p, o, w, did))
        lap("copy graph")

    if project_graph:
        for ws in VOCAB:
            conn.execute(
                "select exo_private.project_entities(array(select id from exo_private.entities where workspace = %s))",
                (ws,),
            )
            conn.execute(
                "select exo_private.project_relations(array(select id from exo_private.relations where workspace = %s))",
                (ws,),
            )
        lap("project graph into AGE")
    conn.execute("analyze")
    lap("analyze")

    return corpus_info(gen, seed, as_of, chunk_ids, model_id, embed, owner_entities, mention_count,
                       len(relations), timings, time.perf_counter() - began)  # fmt: skip


def corpus_info(
    gen: Generator, seed: int, as_of: date, chunk_ids: np.ndarray, model_id: int, embed: Embed | None,
    owner_entities: dict[str, int], mentions: int, relations: int, timings: dict[str, float], build_s: float,
) -> CorpusInfo:  # fmt: skip
    rng = random.Random(seed + 2)

    def ids_of(indices: list[int]) -> list[int]:
        return [int(chunk_ids[i]) for i in indices]

    by_kind: dict[str, list[str]] = {}
    for ident in sorted(gen.identifiers):
        kind = ident.split("-")[0] if ident[:3] in {"INC", "CHG", "PRB", "INV", "POL"} else "host"
        by_kind.setdefault(kind, []).append(ident)
    sample = [
        i for kind, members in sorted(by_kind.items()) for i in rng.sample(members, min(8, len(members)))
    ]
    names: dict[str, list[str]] = {}
    for e in sorted(gen.entities, key=lambda e: (-e.mentions, e.name)):
        if e.mentions:
            names.setdefault(e.workspace, []).append(e.name)
    shared = sorted(
        n for n in {n for ws in names for n in names[ws]} if sum(n in set(names[ws]) for ws in names) > 1
    )
    year = str(gen.archival_year)
    return CorpusInfo(
        seed=seed,
        as_of=as_of,
        chunks=len(gen.chunks),
        documents=len(gen.docs),
        chunks_by_workspace=dict(gen.per_workspace),
        entities=sum(1 for e in gen.entities if e.mentions) + len(owner_entities),
        mentions=mentions,
        relations=relations,
        windows=sum(len(d.windows) for d in gen.docs),
        model_id=model_id,
        dimensions=DIMENSIONS,
        vectors="embed" if embed else "random",
        pool_sentences=len(gen.pool.texts),
        identifiers={i: ids_of(gen.identifiers[i]) for i in sample},
        entity_names={ws: names[ws] for ws in VOCAB if ws in names},
        shared_entity_names=shared,
        owner=OWNER,
        owner_entities=owner_entities,
        deferred_subject=DEFERRED,
        deferred_aliases=list(DEFERRED_ALIASES),
        charged_chunk_ids=ids_of([c.index for c in gen.chunks if c.charged]),
        uncharged_deferred_chunk_ids=ids_of(
            [c.index for c in gen.chunks if not c.charged and any(p.search(c.body) for _n, p in gen.names)]
        ),
        topic_phrases={ws: [p for t in v.topics for p in t.phrases] for ws, v in VOCAB.items()},
        semantic_queries=[(q, ws, t.name) for ws, v in VOCAB.items() for t in v.topics for q in t.queries],
        archival_year=gen.archival_year,
        archival_year_chunk_ids=ids_of([c.index for c in gen.chunks if re.search(rf"\b{year}\b", c.body)]),
        timings=timings,
        build_s=build_s,
    )


# -- the script ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=2, help="workspaces loaded at a time")
    parser.add_argument("--real-embeddings", action="store_true",
                        help="embed the sentence pool with the MiniLM server (started on a free port)")  # fmt: skip
    parser.add_argument("--project-graph", action="store_true", help="also project the graph into AGE")
    args = parser.parse_args()

    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-corpus-"))
    embed = None
    try:
        if args.real_embeddings:
            port = free_port()
            began = time.perf_counter()
            services.start_embeddings(cfg, port, run_dir=run_dir)
            print(f"embedding server up on port {port} in {time.perf_counter() - began:.1f} s")
            endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", MODEL, 120.0, {"dimensions": DIMENSIONS})
            embed = functools.partial(client.embed, endpoint)

        with (
            scratch_database(cfg, "bench_search_corpus") as name,
            connect(admin_url(cfg, name), "exo-bench-search-corpus", autocommit=True) as conn,
        ):
            info = build_corpus(
                conn, args.chunks, args.seed, embed, project_graph=args.project_graph, jobs=args.jobs
            )
            counts = dict(
                conn.execute(
                    """select 'documents', count(*) from exo_private.documents
                       union all select 'chunks', count(*) from exo_private.chunks
                       union all select 'charged chunks', count(*) from exo_private.chunks where charged_subjects <> '{}'
                       union all select 'vectors', count(*) from exo_private.chunk_embeddings
                       union all select 'entities', count(*) from exo_private.entities
                       union all select 'mentions', count(*) from exo_private.mentions
                       union all select 'relations', count(*) from exo_private.relations
                       union all select 'extraction windows', count(*) from exo_private.extraction_windows"""
                ).fetchall()
            )
            size = conn.execute("select pg_size_pretty(pg_database_size(current_database()))").fetchone()[0]
    finally:
        if args.real_embeddings:
            services.down(cfg, run_dir=run_dir)

    print(
        f"corpus of seed {info.seed} as of {info.as_of}, vectors: {info.vectors} ({info.pool_sentences} pool sentences)"
    )
    print("  " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    print("  chunks by workspace: " + ", ".join(f"{k} {v:,}" for k, v in info.chunks_by_workspace.items()))
    print(f"  owner hubs {info.owner_entities}, archival year {info.archival_year} "
          f"({len(info.archival_year_chunk_ids):,} chunks), shared names {len(info.shared_entity_names)}")  # fmt: skip
    print(f"  identifiers sampled: {', '.join(list(info.identifiers)[:6])}, ...")
    print("  " + ", ".join(f"{k} {v:.1f} s" for k, v in info.timings.items()))
    print(f"built in {info.build_s:.1f} s; database size {size}")


if __name__ == "__main__":
    main()
