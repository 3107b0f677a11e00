"""Benchmark: "nothing answers" and answers held, on questions people wrote: the FAQs Debian ships.

Data: the FAQs of Debian packages, fetched with `apt-get download` into a temporary folder (the
command and each package's version are printed): the Debian FAQ (debian-faq, its text edition)
and the FAQs of sed, valgrind, xz-utils, zlib1g-dev, procps and lsof. Each FAQ is read into
question and answer pairs by its layout, not by its wording: a question is a line that opens with
a marker (`Q:`, a section number such as `3.1.` or `1.`) or is an unindented line whose answer
is indented, and ends with `?` within three lines; its answer is
what follows up to the next question, numbered heading or rule line. Pairs whose answer has fewer
than 12 words (tables of contents) are dropped.

The memory: for every FAQ but the held-out one (--other, default lsof), a seeded half of its
pairs' answers (never their questions) written as one Markdown note per FAQ, ingested as
`exo ingest VAULT --workspace personal` does into a scratch database, every chunk embedded by
MiniLM. With --noise N, the memory also holds the documentation of N other packages (NOISE, in
its order): each one's top-level README, NEWS and changelog files of /usr/share/doc, the first
NOISE_CHARS characters of each, one note a file. A user's folder is mostly not about what a
question asks: changelogs share the FAQs' words ("package", "file", "bug", "version") without
answering them, so BM25's first thirty candidates fill with them and the packet must still find
the answer among them, and still say when nothing answers. The questions, --questions of each kind (seeded sample):

  answerable   a kept pair's question; held when the context shows one sentence of 5 words or
               more of its answer
  held out     a question of the same FAQs whose answer was left out: on the memory's topics,
               but nothing in it was written to answer it (other answers may touch it: the
               misses are printed to be read)
  other        a question of the held-out FAQ, about software the memory never mentions

Per question: exo.context_packet_json as exo_reader (its report.answer says whether anything
answers), BM25 top-k and exact vector top-k over the chunks (exocortex.eval.shadow's), with their
tokens. Printed: answers held by each, "nothing answers" said for each kind (the baselines never
say it), and the questions where the packet's word was wrong, with its reason.

    .venv/bin/python -m bench.public_faqs [--questions 60] [--seed 7] [--k 5] [--other lsof]
        [--show 12] [--setting KEY=JSON ...]
"""

from __future__ import annotations

import argparse
import gzip
import random
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bench.scratch import add_setting_option, apply_settings, ingest_vault, trial_settings
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.eval import shadow
from exocortex.models import services
from exocortex.ops.migrate import scratch_database
from tests.support.models import free_ports

# package -> its FAQ inside the package
FAQS = {
    "debian-faq": "usr/share/doc/debian/FAQ/debian-faq.en.txt.gz",
    "sed": "usr/share/doc/sed/sedfaq.txt.gz",
    "valgrind": "usr/share/doc/valgrind/FAQ.txt.gz",
    "xz-utils": "usr/share/doc/xz-utils/faq.txt.gz",
    "zlib1g-dev": "usr/share/doc/zlib1g-dev/FAQ.gz",
    "procps": "usr/share/doc/procps/FAQ.gz",
    "lsof": "usr/share/doc/lsof/00FAQ.gz",
}
OWNER = "Sam Reader"
APP = "exo-bench-faqs"
KINDS = ("answerable", "held out", "other")
# --noise: packages whose documentation a memory holds besides the FAQs (common tools, in an order
# that mixes topics), and how much of each file
NOISE = (
    "bash", "curl", "gzip", "git", "rsync", "tar", "vim-common", "make", "wget", "openssh-client",
    "less", "grep", "findutils", "diffutils", "bzip2", "file", "patch", "gawk", "screen", "tmux",
    "cron", "logrotate", "sudo", "apt", "dpkg", "man-db", "nano", "psmisc", "util-linux",
    "e2fsprogs", "iproute2", "mutt", "postfix", "coreutils",
)  # fmt: skip
NOISE_CHARS = 12_000
_NOISE_FILE = re.compile(r"(?i)^(README|NEWS|changelog)")

_MARKER = r"(?:Q[:.]\s+|(?:\d+\.)+\d*\s+|\d+(?:\.\d+)+\s+|\d+\)\s+)"
_OPENS = re.compile(rf"^(?P<indent>\s*)(?P<marker>{_MARKER})?(?P<text>[\"'A-Za-z(].*)$")
_HEADING = re.compile(r"^\s*(?:\d+\.)+\d*\.?\s+\S")
_RULE = re.compile(r"^\s*[-=~*_]{6,}\s*$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass
class Pair:
    faq: str
    question: str
    answer: str

    def sentences(self) -> list[str]:
        """The answer's sentences of 5 words or more: one shown means the answer is shown."""
        flat = " ".join(self.answer.split())
        return [s for s in _SENTENCE.split(flat) if len(s.split()) >= 5]


@dataclass
class Result:
    kind: str
    pair: Pair
    held: dict[str, bool] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    nothing: bool = False
    why: str = ""
    cited: bool = False
    """A chunk the packet cites holds a sentence of the answer (its excerpt may not show it)."""


def fetch(folder: Path, noise: tuple[str, ...] = ()) -> dict[str, str]:
    """Download the packages (the FAQs' and `noise`) into folder and unpack them; {package: version}."""
    command = ["apt-get", "download", *FAQS, *noise]
    print("$ " + " ".join(command), flush=True)
    subprocess.run(command, cwd=folder, check=True, capture_output=True)
    versions = {}
    for deb in sorted(folder.glob("*.deb")):
        package, version = deb.name.split("_")[:2]
        versions[package] = version.replace("%3a", ":")
        subprocess.run(["dpkg-deb", "-x", str(deb), str(folder / "x")], check=True)
    return versions


def noise_notes(unpacked: Path, vault: Path, packages: tuple[str, ...]) -> int:
    """Write the top-level README, NEWS and changelog files of each package's documentation (the
    first NOISE_CHARS characters, gzip or plain) as notes under vault/noise; how many."""
    written = 0
    for package in packages:
        folder = unpacked / "usr/share/doc" / package
        for path in sorted(folder.glob("*")) if folder.is_dir() else ():
            if not path.is_file() or path.is_symlink() or not _NOISE_FILE.match(path.name):
                continue
            data = path.read_bytes()
            text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8", "replace")
            note = vault / "noise" / f"{package}-{path.name.removesuffix('.gz')}.md"
            note.parent.mkdir(exist_ok=True)
            note.write_text(f"# {package}: {path.name}\n\n{text[:NOISE_CHARS]}\n", encoding="utf-8")
            written += 1
    return written


def _question_at(lines: list[str], i: int) -> tuple[str, int] | None:
    """The question opening at line i and the line after it, or None."""
    m = _OPENS.match(lines[i])
    if m is None:
        return None
    if not m["marker"]:
        # no marker: an unindented line whose answer is indented (procps)
        following = next((line for line in lines[i + 1 :] if line.strip()), "")
        if m["indent"] or not following[:1].isspace():
            return None
    text = []
    for j in range(i, min(i + 3, len(lines))):
        if not lines[j].strip() or (j > i and _HEADING.match(lines[j])):
            return None
        text.append(lines[j].strip() if j > i else m["text"].strip())
        if text[-1].endswith("?"):
            return " ".join(text), j + 1
    return None


def pairs_of(faq: str, text: str) -> list[Pair]:
    """The question and answer pairs of one FAQ's text, by its layout."""
    lines = text.expandtabs(8).splitlines()
    found: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(lines):
        q = _question_at(lines, i)
        if q is not None:
            found.append((q[0], []))
            i = q[1]
            continue
        if _HEADING.match(lines[i]) or _RULE.match(lines[i]):
            if found:
                found.append(("", []))  # a heading ends the answer before it
        elif found:
            found[-1][1].append(lines[i])
        i += 1
    pairs = []
    for question, answer in found:
        body = "\n".join(answer).strip()
        body = re.sub(r"^A[:.]\s+", "", body)
        if question and len(body.split()) >= 12:
            pairs.append(Pair(faq, question, body))
    return pairs


def note_of(faq: str, pairs: list[Pair]) -> str:
    """The kept answers of one FAQ as a note: paragraphs, no questions."""
    return f"# Notes on {faq}\n\n" + "\n\n".join(p.answer for p in pairs) + "\n"


def held(pair: Pair, text: str) -> bool:
    return any(shadow.holds(text, s) for s in pair.sentences())


def ask(admin, reader, kind: str, pair: Pair, k: int, workspaces: list[str], model_id: int) -> Result:
    q = shadow.Question(pair.question, (pair.question,))
    r = Result(kind, pair)
    vector = shadow.embed_question(admin, pair.question).get("vector")
    packet, _ms = shadow.run_packet(reader, q, 4000, vector)
    answer = packet["report"].get("answer") or {}
    r.nothing, r.why = answer.get("found") is False, answer.get("why", "")
    r.held["packet"], r.tokens["packet"] = held(pair, packet["text"]), packet["tokens"]
    ids = [u["chunk_id"] for u in packet.get("used") or [] if u.get("chunk_id")]
    bodies = admin.execute("select body from exo_private.chunks where id = any(%s)", (ids,)).fetchall()
    r.cited = any(held(pair, body) for (body,) in bodies)
    chunks, _ms = shadow.run_bm25(admin, q, k, workspaces)
    text = "\n\n".join(c.body for c in chunks)
    r.held["bm25"], r.tokens["bm25"] = held(pair, text), shadow.estimate_tokens(text)
    if vector is not None:
        chunks, _ms = shadow.run_vector(admin, q, k, vector, model_id)
        text = "\n\n".join(c.body for c in chunks)
        r.held["vector"], r.tokens["vector"] = held(pair, text), shadow.estimate_tokens(text)
    return r


def pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def report(results: list[Result], k: int, show: int) -> None:
    answerable = [r for r in results if r.kind == "answerable"]
    print("\nanswerable questions, the answer shown (one sentence of it), at mean tokens:")
    for method in ("packet", "bm25", "vector"):
        rs = [r for r in answerable if method in r.held]
        tokens = statistics.mean(r.tokens[method] for r in rs) if rs else 0
        label = method if method == "packet" else f"{method}@{k}"
        print(f"  {label:10s} {pct(sum(r.held[method] for r in rs), len(rs)):>14s}  {tokens:6.0f} tokens")
    missed = [r for r in answerable if not r.held["packet"]]
    print(
        f"  packet misses: {sum(r.cited for r in missed)} of {len(missed)} cite a chunk that holds the answer "
        f"(the excerpt shows another part); BM25@{k} holds {sum(r.held['bm25'] for r in missed)} of them"
    )
    for r in missed[:show]:
        print(f"    [{r.pair.faq}] {r.pair.question}  -- cited {r.cited}, bm25 {r.held['bm25']}")
    print('\n"nothing answers" said by the packet (the baselines never say it):')
    for kind in KINDS:
        rs = [r for r in results if r.kind == kind]
        print(f"  {kind:11s} {pct(sum(r.nothing for r in rs), len(rs))}")
    wrong = [r for r in answerable if r.nothing]
    print(f"\nanswerable, said nothing answers ({len(wrong)}):")
    for r in wrong[:show]:
        print(f"  [{r.pair.faq}] {r.pair.question}  -- {r.why}")
    for kind in ("held out", "other"):
        missed = [r for r in results if r.kind == kind and not r.nothing]
        print(f"\n{kind}, said something answers ({len(missed)}; first {min(show, len(missed))}):")
        for r in missed[:show]:
            print(f"  [{r.pair.faq}] {r.pair.question}  -- {r.why}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=60, help="of each kind")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--k", type=int, default=5, help="chunks each baseline returns")
    parser.add_argument("--other", default="lsof", choices=sorted(FAQS), help="the FAQ left out whole")
    parser.add_argument("--show", type=int, default=12)
    parser.add_argument(
        "--noise", type=int, default=0, help="packages whose documentation the memory holds too"
    )
    add_setting_option(parser)
    args = parser.parse_args()
    args.settings = trial_settings(parser, args)

    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-faqs-"))
    noise = NOISE[: args.noise]
    versions = fetch(run_dir, noise)
    rng = random.Random(args.seed)
    kept: list[Pair] = []
    left: list[Pair] = []
    other: list[Pair] = []
    vault = run_dir / "vault"
    vault.mkdir()
    for package, member in FAQS.items():
        pairs = pairs_of(
            package, gzip.decompress((run_dir / "x" / member).read_bytes()).decode("utf-8", "replace")
        )
        print(f"  {package} {versions.get(package, '?')}: {len(pairs)} question and answer pairs")
        if package == args.other:
            other.extend(pairs)
            continue
        rng.shuffle(pairs)
        half = len(pairs) // 2
        kept.extend(pairs[:half])
        left.extend(pairs[half:])
        (vault / f"{package}.md").write_text(note_of(package, pairs[:half]), encoding="utf-8")
    if noise:
        notes = noise_notes(run_dir / "x", vault, noise)
        print(f"  and {notes} notes of {len(noise)} other packages' documentation")
    asked = [
        (kind, p)
        for kind, pool in zip(KINDS, (kept, left, other), strict=True)
        for p in rng.sample(pool, min(args.questions, len(pool)))
    ]
    print(f"{datetime.now():%Y-%m-%d %H:%M}: {len(kept)} answers kept in {len(FAQS) - 1} notes; "
          f"asking {len(asked)} questions", flush=True)  # fmt: skip

    cfg = config.load()
    (port,) = free_ports(1)
    results = []
    try:
        services.start_embeddings(cfg, port, run_dir=run_dir)
        with scratch_database(cfg, "bench_faqs") as name:
            began = time.perf_counter()
            ingest_vault(cfg, name, f"http://127.0.0.1:{port}/v1", vault, OWNER, APP, queues=("embed",))
            with (
                connect(admin_url(cfg, name), APP, autocommit=True) as admin,
                connect(role_url(cfg, "exo_reader", name), APP, autocommit=True) as reader,
            ):
                apply_settings(admin, args.settings)
                (chunks,) = admin.execute("select count(*) from exo_private.chunks").fetchone()
                print(
                    f"ingested and embedded {chunks} chunks in {time.perf_counter() - began:.0f} s",
                    flush=True,
                )
                (model_id,) = admin.execute("select exo_private.active_embedding_model()").fetchone()
                workspaces = shadow.lexical_workspaces(admin)
                for done, (kind, pair) in enumerate(asked, 1):
                    results.append(ask(admin, reader, kind, pair, args.k, workspaces, model_id))
                    if done % 30 == 0:
                        print(f"  {done}/{len(asked)} questions", flush=True)
    finally:
        services.down(cfg, run_dir=run_dir)
    report(results, args.k, args.show)


if __name__ == "__main__":
    main()
