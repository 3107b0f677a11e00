"""Benchmark: does recent chatter hide strong old evidence in chat memory?

Issue 29 reports a public long-term conversation benchmark (two-person histories, 2022 to early
2024, imported into one memory) where the packet holds the evidence message for 12% of the
questions, exo.search_messages top 10 for 8%, plain BM25 top 10 for 47%: the whole history a
question asks about is archival, other histories reach into the present bands, their weak
matches ("Hi John, how's it going?") count as an answer, and the archive stays closed.

Corpus (generated, deterministic for --seed and the run's day): --pairs two-person histories of
about 150-300 messages each, in sessions at realistic hours: greetings, small talk, questions and
replies, and facts stated in single messages (an event with a place, a date, a person or an
object: "I finally went to the pottery workshop in Leeds last Saturday.", "We adopted a beagle
called Pepper last week!"), each kind of fact in 3-4 phrasings, sometimes asked for first ("Any
news?"), sometimes mentioned again later ("How is Pepper settling in?"). Eras, relative to the
run's day (as_of) and the scratch database's banding.current_days / banding.recent_days (365 and
1095 by default):

  archival  about 60% of the pairs: the whole history is more than recent_days old (3-4 years)
  recent    the whole history lies in the recent band (1-3 years old)
  current   from the recent band up to the last weeks

Histories of the recent and current eras hold much more chatter that shares names and common
words with the questions ("Did you hear from Caroline lately?", "What about the group? Are you
still going?") but not the facts. Questions (--questions, default 150, about --old-share of them
of kind `old`, about facts of archival histories; the rest `recent`) name the person and the
distinctive object but are phrased otherwise ("When did Caroline first attend the LGBTQ support
group?"); `expect` (Question.facts[0]) is the evidence message's whole text, which occurs in one
message only.

The export is the generic JSONL chat format (docs/chat-formats.md), imported into a scratch
database as `exo import-chat FILE --format jsonl` does, the embed queue drained with the real
MiniLM embeddings (graph extraction skipped, as in bench/chat_recall.py). Per question, as
exo_reader where the method is the product's:

  packet        exo.context_packet_json(question, query_embedding => its vector) holds the
                evidence text (case-insensitive, blind to runs of white space); tokens: its own
  messages@10   exo.search_messages(question, 10) returns the evidence message
  bm25@10       BM25 (pg_textsearch) over the single messages, "Sender: text" (bench/chat_recall)
  vector@10     the same messages embedded by the same model, exact cosine top 10

Tokens of the baselines: characters/4 of the messages they return. Also printed: the packet's
report.archive (open, and why, its scores left out) by kind, how often exo.search_messages left
archival matches out (its hint row), how often the packet says nothing in the memory answers
(report.answer.found false) and the words it names as unused, and for every packet miss why: the
archive stayed closed over archival evidence, the evidence's window is not among the 25
exo.search_json ranks with the same arguments, it ranks there but is not cited, or it is cited but
the excerpt left the message out; --show N prints the first N misses with their packets.

    .venv/bin/python -m bench.chat_eras [--pairs 10] [--questions 150] [--seed 29] [--old-share 0.7]
        [--show 4] [--keep DIR] [--setting KEY=JSON ...]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from pgvector import Vector

from bench.chat_histories import (
    BOOK_ADJ,
    BOOK_NOUN,
    CITIES,
    FILLER,
    FIRST_NAMES,
    JOBS,
    PET_NAMES,
    History,
    Message,
    Question,
    fill,
    session_times,
    write_export,
)
from bench.chat_recall import (
    BM25,
    NEAREST,
    PACKET,
    Outcome,
    baseline_table,
    embed_all,
    embedding_endpoint,
    load_note,
    outcome,
    share,
)
from bench.public_chats import import_export, print_corpus
from bench.scratch import add_setting_option, apply_settings, serve_embeddings_from, trial_settings
from exocortex import config
from exocortex.db import admin_url, connect, role_url
from exocortex.eval.shadow import holds
from exocortex.ops.migrate import scratch_database
from exocortex.plpy.model_client import Endpoint
from exocortex.worker.loop import Worker

APP = "exo-bench-chat-eras"
CURRENT_DAYS, RECENT_DAYS = 365, 1095
"""The banding.* defaults (migrations/0003); the run reads its database's own."""
ERAS = ("archival", "recent", "current")
KINDS = ("old", "recent")
METHODS = ("packet", "messages@10", "bm25@10", "vector@10")
SEARCH_JSON = "select exo.search_json(%s, query_embedding => %s::float8[])"
MESSAGES = "select message_id, withheld from exo.search_messages(%s, 10)"
"""The message ids (ordinals through ordinal_of) and the hint rows (message_id null)."""

PEOPLE = [
    "Caroline", "Melanie", "John", "Maria", "Gina", "Jon", "Joanna", "Nate", "Tim", "Audrey", "Andrew",
    "Deborah", "Evan", "Calvin", "Dave", "Jolene", "James", "Fiona", "Harriet", "Isaac", "Kirsten",
    "Laurence", "Moira", "Neville", "Patrick", "Rosalind", "Simone", "Trevor", "Winifred", "Graham",
]  # fmt: skip
"""The histories' participants (first names, one person each); other names come from FIRST_NAMES."""
NAMES = [n for n in FIRST_NAMES if n not in PEOPLE]


# --- the facts ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FactKind:
    """A kind of fact: slots drawn from pools (a tuple value fills several slots), the teller's
    phrasings, the question's phrasings ({who}: the teller) and later mentions by the other."""

    name: str
    pools: tuple[tuple[str, tuple], ...]
    says: tuple[str, ...]
    asks: tuple[str, ...]
    after: tuple[str, ...] = ()


BREEDS = ("beagle", "spaniel", "greyhound", "dachshund", "border collie", "whippet", "corgi", "husky",
          "labrador", "poodle", "dalmatian", "schnauzer", "basset hound", "pug")  # fmt: skip
CRAFTS = ("pottery", "woodcarving", "bookbinding", "glassblowing", "stained glass", "letterpress",
          "screen printing", "candle making", "blacksmithing", "weaving", "calligraphy", "silversmithing",
          "furniture restoration", "basket weaving", "lino printing", "cheese making")  # fmt: skip
GROUPS = ("LGBTQ support group", "grief support circle", "new parents' meetup", "astronomy society",
          "Spanish conversation group", "community choir", "amateur theatre troupe", "birdwatching club",
          "sea swimming club", "chess club", "beekeeping association", "repair cafe", "men's shed",
          "stroke survivors' circle")  # fmt: skip
BANDS = ("The Velvet Comets", "Marigold Static", "Paper Lanterns", "Northbound Owls", "The Glass Pilots",
         "Saltwater Choir", "Lucid Foxes", "The Midnight Orchard", "Copper Tides", "Hollow Pines",
         "Neon Gulls", "The Amber Signals", "Dead Calm Radio", "Kestrel Parade")  # fmt: skip
VENUES = ("the Roundhouse", "the Apollo", "the Barrowland", "Brixton Academy", "the Corn Exchange",
          "the Troxy", "Rock City", "the Leadmill", "the Usher Hall", "the Albert Hall", "the Forum",
          "the Ritz", "the Waterfront", "the Boiler Room")  # fmt: skip
PEAKS = (("Ben Nevis", "the Highlands"), ("Snowdon", "Snowdonia"), ("Scafell Pike", "the Lake District"),
         ("Pen y Fan", "the Brecon Beacons"), ("Mount Teide", "Tenerife"), ("Triglav", "Slovenia"),
         ("Mount Olympus", "Greece"), ("Slieve Donard", "the Mournes"), ("Croagh Patrick", "County Mayo"),
         ("Pico Ruivo", "Madeira"), ("Monte Cinto", "Corsica"), ("Galdhopiggen", "Norway"),
         ("Mount Etna", "Sicily"), ("Schiehallion", "Perthshire"))  # fmt: skip
TITLES = tuple(f"The {a} {n}" for a, n in zip(BOOK_ADJ, BOOK_NOUN, strict=True))
AUTHORS = ("Imogen Vale", "Tobias Wren", "Rhiannon Clay", "Anselm Hart", "Marguerite Osei",
           "Lionel Baptiste", "Cressida Moon", "Dorian Fairweather", "Eleanor Quist", "Hector Lindgren",
           "Saoirse Dunne", "Ptolemy Grace", "Beatrix Nkemelu", "Casimir Holt")  # fmt: skip
COLOURS = ("mustard yellow", "teal", "burgundy", "sage green", "navy", "coral", "lilac", "rust orange",
           "mint green", "charcoal", "cherry red", "duck-egg blue")  # fmt: skip
OBJECTS = ("armchair", "bicycle", "record player", "raincoat", "teapot", "desk lamp", "rug", "typewriter",
           "kayak", "sewing machine", "telescope", "espresso machine", "canoe", "writing desk")  # fmt: skip
SHOPS = ("Hatton's Antiques", "the Sunday car boot sale", "Morley's", "a charity shop on Elm Road",
         "Pine & Co", "the flea market by the docks", "Bellweather Home", "Second Spin", "Gallagher's",
         "the auction house on Bridge Street", "Thistle & Thread", "Marchetti's")  # fmt: skip
RELATIONS = ("cousin", "brother", "sister", "best friend", "aunt", "uncle", "niece", "flatmate")
RACE_TIMES = ("1:47:12", "1:52:40", "2:03:05", "1:39:58", "1:58:21", "2:11:47", "1:44:36", "1:55:09",
              "2:06:33", "1:49:50", "1:36:14", "2:14:02", "1:41:27", "2:00:48")  # fmt: skip
SUBJECTS = ("a lighthouse at dusk", "a fox in the snow", "a field of sunflowers", "an old red tractor",
            "a heron by the canal", "a stormy harbour", "a bowl of lemons", "a row of beach huts",
            "a vineyard in autumn", "a tram in the rain", "a lavender field", "a ruined abbey")  # fmt: skip
DISHES = ("beef Wellington", "a lemon drizzle cake", "shakshuka", "mushroom risotto", "jollof rice",
          "pierogi", "a tarte tatin", "lamb tagine", "pad thai", "moussaka", "bao buns", "ratatouille",
          "goulash", "gnocchi")  # fmt: skip
CHARITIES = ("the animal shelter on Mill Lane", "St Cuthbert's food bank", "the children's hospice",
             "Riverside community garden", "the night kitchen on Dock Street", "the Oxfam bookshop",
             "the city farm", "a refugee drop-in centre", "the lifeboat station", "the wildlife rescue centre",
             "the soup kitchen at St Anne's", "Greenway allotments")  # fmt: skip
STREETS = ("Juniper Lane", "Albion Road", "Wellington Crescent", "Marsh Street", "Orchard Row", "Canal Walk",
           "Victoria Terrace", "Quarry Hill", "Lark Rise", "Foundry Lane", "Chapel Street", "Beacon Road")  # fmt: skip
INSTRUMENTS = ("cello", "banjo", "saxophone", "harp", "ukulele", "clarinet", "mandolin", "trumpet", "violin",
               "drums", "oboe", "bassoon")  # fmt: skip
LAKES = ("Loch Lomond", "Lake Bled", "Kielder Water", "Ullswater", "Lake Vyrnwy", "Loch Ness", "Lake Annecy",
         "Lake Garda", "Bala Lake", "Coniston Water", "Lough Erne", "Lake Ohrid")  # fmt: skip
COMPANIONS = ("the kids", "my brother", "the scouts", "two friends from work", "my dad", "my cousins",
              "my nephews", "my partner", "my old school friends", "my sister")  # fmt: skip
BONES = ("wrist", "ankle", "collarbone", "elbow", "big toe", "little finger", "kneecap", "thumb", "nose",
         "shoulder blade", "jaw", "heel")  # fmt: skip
CAUSES = ("falling off a ladder", "slipping on black ice", "playing five-a-side football",
          "skateboarding with my nephew", "bouldering at the climbing wall", "falling down the stairs at work",
          "crashing my bike", "roller skating in the park", "jumping on a trampoline", "moving a piano",
          "windsurfing off the pier", "trying to catch a frisbee")  # fmt: skip
ARTISTS = ("Ottilie Brand", "Kenji Morrow", "Aurelia Stone", "Femi Adeyemi", "Greta Lindholm",
           "Rafael Okonkwo", "Maud Kessler", "Yusuf Demir", "Clementine Hale", "Bastian Roe", "Ingrid Solberg",
           "Tomasz Wilk")  # fmt: skip
MUSEUMS = ("the Tate Modern", "the Hepworth", "the Baltic", "the Whitworth", "the Ikon Gallery",
           "the Kelvingrove", "the Ashmolean", "the Fitzwilliam", "the Walker Art Gallery", "the Barbican",
           "the Burrell Collection", "Modern One")  # fmt: skip
COURSES = ("marine biology", "Japanese", "accounting", "art history", "sign language", "counselling",
           "web design", "forensic science", "landscape architecture", "nutrition", "archaeology",
           "photography")  # fmt: skip
COLLEGES = ("the Open University", "Leeds College of Art", "City Lit", "Birkbeck", "Morley College",
            "the community college", "Ruskin College", "the adult education centre", "Kingsway College",
            "Fircroft College")  # fmt: skip

FACTS = (
    FactKind("pet", (("breed", BREEDS), ("pet", tuple(PET_NAMES))),
             ("We adopted a {breed} called {pet} last week!", "Meet {pet}, our new {breed} from the rescue centre.",
              "So we did it: there's a {breed} named {pet} living with us now.",
              "Big news, we brought home a little {breed}. {pet} is already asleep on the sofa."),
             ("What is the name of {who}'s {breed}?", "What did {who} call the {breed} they adopted?",
              "What is the {breed} that {who} took home from the shelter called?"),
             ("How is {pet} settling in?", "Give {pet} a cuddle from me!")),
    FactKind("workshop", (("craft", CRAFTS), ("city", tuple(CITIES))),
             ("I finally went to the {craft} workshop in {city} last Saturday.",
              "Spent all of Sunday at a {craft} class in {city}, my hands are wrecked.",
              "That {craft} course in {city} yesterday was worth every penny.",
              "Did a one-day {craft} workshop over in {city}, I made something that almost looks right."),
             ("When did {who} attend the {craft} class in {city}?", "Where did {who} take a {craft} course?",
              "When was {who}'s {craft} workshop?"),
             ("Have you done any more {craft} since?",)),
    FactKind("group", (("group", GROUPS),),
             ("I went to the {group} meeting yesterday and it was so powerful.",
              "Last night was my first evening with the {group}, everyone was so welcoming.",
              "Joined the {group} on Tuesday. I think I'll keep going.",
              "Went along to the {group} for the first time today, I was nervous but it was great."),
             ("When did {who} go to the {group}?", "When did {who} first attend the {group}?",
              "How did {who} feel about the {group}?"),
             ("Are you still going to the {group}?",)),
    FactKind("concert", (("band", BANDS), ("venue", VENUES)),
             ("Saw {band} live at {venue} on Friday, best gig of my life.",
              "{band} played {venue} last night and I was right at the front!",
              "Guess who I saw at {venue}? {band}! Incredible show.",
              "My ears are still ringing from {band} at {venue}."),
             ("Where did {who} see {band} play?", "When did {who} watch {band} perform live?",
              "Which venue was the {band} concert {who} went to?")),
    FactKind("hike", (("peak/region", PEAKS),),
             ("We made it to the top of {peak} on Sunday, the views over {region} were unreal.",
              "Back from {region}! Hiked up {peak} with my brother.",
              "Climbed {peak} yesterday, {region} is stunning in this weather.",
              "Legs are destroyed after {peak}. Worth it, {region} looked magical from up there."),
             ("Which mountain did {who} climb in {region}?", "When did {who} hike up {peak}?",
              "Which summit did {who} reach during the trip to {region}?")),
    FactKind("job", (("role/company", tuple(JOBS)),),
             ("I start as {role} at {company} on Monday!",
              "Signed the contract today, I'm officially {role} at {company}.",
              "Good news: {company} offered me the job, I'll be {role} there.",
              "First week as {role} at {company} done, I'm exhausted but happy."),
             ("Which company hired {who} as {role}?", "Where did {who} get a position as {role}?",
              "When did {who} begin working for {company}?"),
             ("How are things at {company}?",)),
    FactKind("book", (("title", TITLES), ("author", AUTHORS)),
             ("I'm reading {title} by {author} and I can't put it down.",
              "Just finished {author}'s {title}, it wrecked me.",
              "You have to read {title}. {author} is a genius.",
              "Stayed up till 2am finishing {title}, {author} really knows how to end a book."),
             ("Who is the author of {title}, the novel {who} loved?",
              "Which writer wrote the book {title} that {who} read?", "What did {who} think of {title}?")),
    FactKind("purchase", (("colour", COLOURS), ("object", OBJECTS), ("shop", SHOPS)),
             ("Bought a {colour} {object} at {shop} today, total impulse buy.",
              "Look what I found at {shop}: a {colour} {object}!",
              "Treated myself to a {colour} {object} from {shop}.",
              "The {colour} {object} from {shop} arrived and it's perfect."),
             ("What colour was the {object} {who} got from {shop}?", "Where did {who} buy the {colour} {object}?",
              "What did {who} pick up at {shop}?")),
    FactKind("wedding", (("relation", RELATIONS), ("rel", tuple(NAMES)), ("city", tuple(CITIES))),
             ("My {relation} {rel} got married in {city} on Saturday, what a party.",
              "{rel}'s wedding in {city} was beautiful, I cried twice.",
              "Just got back from {city}, {rel} is married now! My {relation} looked so happy.",
              "Danced till 3am at {rel}'s wedding in {city}. My {relation} knows how to throw a party."),
             ("Where did {who}'s {relation} {rel} get married?",
              "When was the wedding of {who}'s {relation} {rel}?", "In which city did {rel} hold the wedding?")),
    FactKind("race", (("city", tuple(CITIES)), ("time", RACE_TIMES)),
             ("I ran the {city} half marathon in {time}!",
              "Crossed the line in {time} at the {city} half, a new personal best.",
              "{time} at the {city} half marathon. My legs are dead.",
              "Official result from {city} came through: {time} for the half marathon!"),
             ("What was {who}'s finishing time in the {city} half marathon?",
              "How fast did {who} complete the {city} half?", "When did {who} run the half marathon in {city}?")),
    FactKind("painting", (("subject", SUBJECTS), ("person", tuple(NAMES))),
             ("I painted {subject} for {person}'s birthday.",
              "Finished my painting of {subject}, it's a present for {person}.",
              "{person} is getting a painting of {subject} from me, I finished it last night."),
             ("What did {who} paint for {person}?", "What was the picture {who} made as a gift for {person}?",
              "Who was {who}'s painting of {subject} for?")),
    FactKind("cooking", (("dish", DISHES), ("person", tuple(NAMES))),
             ("Made {dish} for {person} last night, first time ever.",
              "Tried cooking {dish} for {person} and it actually worked!",
              "{person} came over and I attempted {dish}. Nobody got food poisoning."),
             ("What dish did {who} cook for {person}?", "What did {who} make when {person} came for dinner?",
              "When did {who} first try making {dish}?")),
    FactKind("volunteer", (("place", CHARITIES),),
             ("Started volunteering at {place} on weekends.",
              "Spent Saturday helping out at {place}, we served eighty people.",
              "I've signed up to volunteer at {place} every other Sunday.",
              "Did my first shift at {place} today, I loved it."),
             ("Where does {who} do volunteer work?", "When did {who} start helping at {place}?",
              "Where did {who} sign up to volunteer?")),
    FactKind("move", (("street", STREETS), ("city", tuple(CITIES))),
             ("We moved into a flat on {street} in {city}!", "New address: {street}, {city}. Come and visit!",
              "Keys collected, we officially live on {street} in {city} now.",
              "Unpacking boxes on {street}, {city} already feels like home."),
             ("Which street did {who} move to in {city}?", "Where is {who}'s new flat?",
              "When did {who} relocate to {street}?"),
             ("How's life on {street}?",)),
    FactKind("lessons", (("instrument", INSTRUMENTS), ("teacher", tuple(NAMES))),
             ("Started {instrument} lessons with a teacher called {teacher}.",
              "Had my first {instrument} lesson today, {teacher} is so patient with me.",
              "{teacher} says I'm a natural at the {instrument}, ha.",
              "Booked weekly {instrument} lessons with {teacher}, wish me luck."),
             ("Who teaches {who} to play the {instrument}?", "When did {who} begin learning the {instrument}?",
              "What is the name of {who}'s {instrument} teacher?"),
             ("How is the {instrument} going?",)),
    FactKind("camping", (("lake", LAKES), ("company", COMPANIONS)),
             ("Went camping at {lake} with {company}, we saw otters!",
              "Three nights in a tent by {lake} with {company}, bliss.",
              "Back from camping at {lake} with {company}, we got rained on every night.",
              "Pitched the tent by {lake} with {company}, woke up to mist on the water."),
             ("Where did {who} go camping with {company}?", "When did {who} camp by {lake}?",
              "Who went with {who} on the camping trip to {lake}?")),
    FactKind("injury", (("bone", BONES), ("cause", CAUSES)),
             ("I broke my {bone} {cause}, so I'm in a cast for six weeks.",
              "X-ray says my {bone} is fractured. That's what I get for {cause}.",
              "Spent the night in A&E after {cause}, turns out I broke my {bone}."),
             ("How did {who} break the {bone}?", "When did {who} fracture the {bone}?",
              "Which bone did {who} break {cause}?"),
             ("How's the {bone} healing?",)),
    FactKind("exhibition", (("artist", ARTISTS), ("museum", MUSEUMS)),
             ("Went to the {artist} exhibition at {museum}, some of the pieces made me cry.",
              "The {artist} show at {museum} is amazing, go before it closes!",
              "Spent the afternoon at {museum} looking at {artist}'s work, stunning."),
             ("Which gallery had the {artist} exhibition {who} saw?", "When did {who} visit the {artist} show?",
              "Whose work did {who} see at {museum}?")),
    FactKind("study", (("course", COURSES), ("college", COLLEGES)),
             ("I enrolled on the {course} course at {college}!",
              "Started my {course} evening classes at {college} this week.",
              "{college} accepted me onto the {course} programme!"),
             ("What is {who} studying at {college}?", "Where is {who} taking the {course} course?",
              "When did {who} sign up to study {course}?")),
)  # fmt: skip

LEADS = ("What did you get up to this weekend?", "Any news?", "So what's new with you?", "How was your week?",
         "Tell me something good.", "What have you been up to?")  # fmt: skip
REACTIONS = ("No way, that's amazing!", "Wow, tell me everything.", "Aww I love that.", "Oh that's brilliant!",
             "Send photos!", "Good for you!", "Wait, seriously?", "Ha, of course you did.", "Oh wow.",
             "That sounds like a lot, are you ok?")  # fmt: skip
GREETINGS = ("Hi {other}, how's it going?", "Hey {other}! Long time no talk.", "Morning {other}!",
             "Hey you, how are things?", "Hi {other}! How was your week?", "Evening {other}, got a minute?",
             "Hey {other}, you around?", "Hiya!")  # fmt: skip
GREETING_REPLIES = ("Hey! All good here, you?", "Not bad at all, busy week.", "Hi! Just got home.",
                    "Pretty good thanks! What's up?", "Heyyy, I was just thinking about you.",
                    "All fine, the usual chaos.", "Hi {other}! Yes, here.")  # fmt: skip
CLOSERS = ("Talk soon!", "Gotta run, speak later.", "Night night!", "Take care x", "Ok, bedtime for me.",
           "Catch you later!", "Speak tomorrow?", "Bye for now!")  # fmt: skip
NOISE = (
    ("Did you hear from {name} lately?", "Not for ages, I should text {name}."),
    ("{name} says hi, by the way.", "Aw, say hi back from me!"),
    ("Ran into {name} at the station, we should all go for a drink.", "Yes! Let's sort a date."),
    ("What about the group? Are you still going?", "Sort of, I skipped the last two."),
    ("Is {name} still going to that group on Thursdays?", "No idea, I'll ask {name}."),
    ("How did the class go in the end?", "It went fine, nothing special."),
    ("When is your next workshop thing?", "Not sure yet, maybe next month."),
    ("Any news about the job?", "Nothing yet, still waiting to hear."),
    ("How's the new job going for {name}?", "Good I think, {name} seems happier."),
    ("Did {name} ever get that dog in the end?", "Still thinking about it, I reckon."),
    ("What was the name of that book you mentioned?", "Honestly I forgot, I'll look it up."),
    ("Where did you go at the weekend?", "Nowhere, I stayed in all weekend."),
    ("When did you last see {name}?", "Must be months ago now."),
    ("Have you been to any good concerts lately?", "No, tickets are so expensive now."),
    ("{name} keeps talking about climbing a mountain this summer.", "Ha, good luck to {name}."),
    ("Are you going to the wedding?", "Probably, if I can get the day off."),
    ("Did you run the race in the end?", "No, I wasn't ready this time."),
    ("Have you painted anything new?", "Not really, no time."),
    ("What did you cook last night?", "Just pasta, nothing exciting."),
    ("Do you still volunteer at weekends?", "Now and then, when I can."),
    ("Which street is {name}'s new place on?", "No clue, somewhere near the park."),
    ("How are the music lessons going?", "Slowly! I'm not very good."),
    ("Where did you go camping last time?", "Just the campsite near my parents'."),
    ("Any good exhibitions on at the moment?", "Not that I've seen."),
    ("What is {name} studying these days?", "Something with computers I think."),
    ("What colour did you go for in the end?", "Still deciding, honestly."),
    ("Where did you buy that?", "Online, it was on sale."),
    ("How did {name} feel about it all?", "Fine, I think. Hard to tell with {name}."),
    ("Who was playing at the gig?", "Some local band, they were good."),
    ("When was the last time you went hiking?", "Last spring, I think."),
)
"""Chatter of the present bands that shares names and common words with the questions."""


@dataclass
class Fact:
    """A fact as stated: its kind, who told it, the slots' values, the message saying it."""

    kind: FactKind
    teller: str
    values: dict[str, str]
    ordinal: int
    sent_at: datetime
    text: str


@dataclass
class Eras:
    """The generated corpus: messages (bench/chat_histories.Message), the questions
    (Question.facts[0] is the expected text, answers its message's ordinal), each conversation's
    era, the day it is relative to."""

    messages: list[Message]
    questions: list[Question]
    eras: dict[str, str]
    as_of: date
    facts: list[Fact] = field(default_factory=list)


def _draw(kind: FactKind, rng: random.Random, used: dict) -> dict[str, str]:
    """Values for the kind's slots, none used by this kind before where the pools allow."""
    seen = used.setdefault(kind.name, set())
    for tries in range(200):
        values: dict[str, str] = {}
        for names, pool in kind.pools:
            value = rng.choice(pool)
            for name, v in zip(
                names.split("/"), value if isinstance(value, tuple) else (value,), strict=True
            ):
                values[name] = v
        fresh = all((k, v) not in seen for k, v in values.items())
        if fresh or (tries > 100 and tuple(values.items()) not in seen):
            seen.update(values.items())
            seen.add(tuple(values.items()))
            return values
    raise ValueError(f"the pools of {kind.name} are too small for so many histories")


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def era_ages(era: str, rng: random.Random, current_days: int, recent_days: int) -> tuple[int, int]:
    """(oldest, newest) age in days of a history of the era, clear of the bands' edges by a margin
    (30 days, less for a narrow recent band)."""
    width = recent_days - current_days
    margin = max(1, min(30, width // 10))
    if era == "archival":
        newest = recent_days + rng.randint(30, 150)
        return newest + rng.randint(150, 300), newest
    if era == "recent":
        newest = current_days + margin + rng.randint(0, width // 3)
        return min(recent_days - margin, newest + rng.randint(width // 3, width // 2)), newest
    oldest = current_days + margin + rng.randint(0, width // 4)
    return oldest, rng.randint(2, max(2, min(20, current_days // 2)))


def _chatter(rng: random.Random, couple: tuple[str, str], at: datetime, noise: float, mentions: list[str]):
    """Two lines of small talk: with chance `noise` a NOISE exchange naming someone of `mentions`."""
    first = rng.choice(couple)
    second = couple[1] if first == couple[0] else couple[0]
    if mentions and rng.random() < noise:
        name = rng.choice(mentions)
        asked, answered = rng.choice(NOISE)
        return [(first, asked.format(name=name), None), (second, answered.format(name=name), None)]
    return [(first, fill(rng, rng.choice(FILLER), second, at), None),
            (second, fill(rng, rng.choice(FILLER), first, at), None)]  # fmt: skip


def _beats(rng: random.Random, couple: tuple[str, str], sessions: int, used: dict) -> list[list]:
    """Per session, the scripted exchanges: a fact (perhaps asked for first, always reacted to) and
    sometimes a later mention of it."""
    segments: list[list] = [[] for _ in range(sessions)]
    for kind in rng.sample(FACTS, rng.randint(15, 19)):
        s = rng.randrange(sessions)
        teller = rng.choice(couple)
        other = couple[1] if teller == couple[0] else couple[0]
        values = _draw(kind, rng, used)
        beat = [(other, rng.choice(LEADS), None)] if rng.random() < 0.4 else []
        beat.append((teller, _cap(rng.choice(kind.says).format(**values)), (kind, teller, values)))
        beat.append((other, rng.choice(REACTIONS), None))
        segments[s].append(beat)
        if kind.after and s + 1 < sessions and rng.random() < 0.4:
            reply = rng.choice(
                ("Really well, thanks!", "Good! Slowly.", "Ha, don't ask.", "Great, more soon.")
            )
            segments[rng.randrange(s + 1, sessions)].append(
                [(other, _cap(rng.choice(kind.after).format(**values)), None), (teller, reply, None)]
            )
    return segments


def _history(
    rng: random.Random,
    conversation_id: str,
    couple: tuple[str, str],
    era: str,
    bands: tuple[date, int, int],
    mentions: list[str],
    used: dict,
    ordinal: int,
) -> tuple[list[Message], list[Fact]]:
    """One history of 150-300 messages in 10-16 sessions within the era's ages."""
    as_of, current_days, recent_days = bands
    oldest, newest = era_ages(era, rng, current_days, recent_days)
    sessions = rng.randint(10, 16)
    starts = session_times(rng, as_of - timedelta(days=oldest), oldest - newest + 1, sessions)
    segments = _beats(rng, couple, sessions, used)
    fixed = sum(len(beat) for segment in segments for beat in segment) + 3 * sessions
    noise = 0.1 if era == "archival" else 0.5
    for _ in range(max(0, rng.randint(150, 300) - fixed) // 2):
        s = rng.randrange(sessions)
        segments[s].append(_chatter(rng, couple, starts[s], noise, mentions))
    title = f"{couple[0]} and {couple[1]}"
    messages: list[Message] = []
    facts: list[Fact] = []
    for start, segment in zip(starts, segments, strict=True):
        opener = rng.choice(couple)
        other = couple[1] if opener == couple[0] else couple[0]
        lines = [(opener, rng.choice(GREETINGS).format(other=other), None),
                 (other, rng.choice(GREETING_REPLIES).format(other=opener), None)]  # fmt: skip
        rng.shuffle(segment)
        for beat in segment:
            lines.extend(beat)
        lines.append((rng.choice(couple), rng.choice(CLOSERS), None))
        at = start
        for sender, text, fact in lines:
            at += timedelta(minutes=rng.randint(0, 6), seconds=rng.randint(5, 59))
            n = ordinal + len(messages)
            messages.append(Message(n, conversation_id, title, sender, False, at, text))
            if fact is not None:
                kind, teller, values = fact
                facts.append(Fact(kind, teller, values, n, at, text))
    return messages, facts


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _questions(rng: random.Random, eras: Eras, n: int, old_share: float, recent_days: int) -> list[Question]:
    """n questions about facts whose text occurs in one message only, about old_share of them about
    archival facts (kind old), each in one of its kind's phrasings, in the order of the messages."""
    folded = [_fold(m.text) for m in eras.messages]
    unique = [f for f in eras.facts if sum(_fold(f.text) in t for t in folded) == 1]
    old = [f for f in unique if (eras.as_of - f.sent_at.date()).days > recent_days]
    new = [f for f in unique if (eras.as_of - f.sent_at.date()).days <= recent_days]
    n_new = min(len(new), n - min(len(old), round(n * old_share)))
    n_old = min(len(old), n - n_new)
    picked = sorted(rng.sample(old, n_old) + rng.sample(new, n_new), key=lambda f: f.ordinal)
    asked = []
    for f in picked:
        kind = "old" if f in old else "recent"
        said = {k: re.sub(r"\bmy\b", "their", v) for k, v in f.values.items()}  # "with my sister"
        text = _cap(rng.choice(f.kind.asks).format(who=f.teller, **said))
        conversation = eras.messages[f.ordinal - 1].conversation_id
        asked.append(
            Question(
                f"{kind}-{f.ordinal}",
                kind,
                conversation,
                text,
                [f.ordinal],
                [f.text],
                answer_date=f.sent_at.date().isoformat(),
            )
        )
    return asked


def generate(
    pairs: int = 10,
    questions: int = 150,
    seed: int = 29,
    as_of: date | None = None,
    current_days: int = CURRENT_DAYS,
    recent_days: int = RECENT_DAYS,
    old_share: float = 0.7,
) -> Eras:
    """`pairs` two-person histories, about 60% of them archival, the rest split between the recent
    and current eras, and the questions; deterministic for the arguments (as_of: today, UTC)."""
    if not 1 <= pairs <= len(PEOPLE) // 2:
        raise ValueError(f"pairs must be between 1 and {len(PEOPLE) // 2}, got {pairs}")
    as_of = as_of or datetime.now(UTC).date()
    rng = random.Random(seed)
    people = rng.sample(PEOPLE, 2 * pairs)
    couples = [(people[2 * i], people[2 * i + 1]) for i in range(pairs)]
    archival = max(1, round(0.6 * pairs))
    rest = pairs - archival
    eras = ["archival"] * archival + ["recent"] * (rest // 2) + ["current"] * (rest - rest // 2)
    rng.shuffle(eras)
    old_people = [p for c, e in zip(couples, eras, strict=True) if e == "archival" for p in c]
    out = Eras([], [], {}, as_of)
    used: dict = {}
    for i, (couple, era) in enumerate(zip(couples, eras, strict=True)):
        conversation_id = f"pair-{i + 1:02d}"
        mentions = [p for p in (people if era == "archival" else old_people) if p not in couple]
        bands = (as_of, current_days, recent_days)
        msgs, facts = _history(
            rng, conversation_id, couple, era, bands, mentions, used, len(out.messages) + 1
        )
        out.messages.extend(msgs)
        out.facts.extend(facts)
        out.eras[conversation_id] = era
    out.questions = _questions(rng, out, questions, old_share, recent_days)
    return out


def write(eras: Eras, out: Path) -> Path:
    """The generic JSONL export (chats.jsonl) and the questions (questions.json) in out."""
    export = write_export(eras.messages, out)
    questions = [dict(asdict(q), expect=q.facts[0], era=eras.eras[q.conversation_id]) for q in eras.questions]
    (out / "questions.json").write_text(json.dumps(questions, indent=1) + "\n", encoding="utf-8")
    return export


# --- the run ------------------------------------------------------------------------------------


@dataclass
class Asked:
    """One question's outcomes, the packet's archive decision, and why the packet missed."""

    q: Question
    outcomes: dict[str, Outcome]
    archive_open: bool
    archive_why: str | None
    archival_hint: bool
    """exo.search_messages left archival matches out (its hint row)."""
    cited: bool
    answered: bool
    """report.answer.found: the packet does not say that nothing in the memory answers."""
    unused: list[str] = field(default_factory=list)
    """Where it says so: the question's words it names as used by no open passage."""
    missed: str = ""
    detail: str = ""


def band_days(admin) -> tuple[int, int]:
    """banding.current_days and banding.recent_days of the database."""
    rows = dict(
        admin.execute(
            "select key, value::int from exo_private.settings "
            "where key in ('banding.current_days', 'banding.recent_days')"
        )
    )
    return rows.get("banding.current_days", CURRENT_DAYS), rows.get("banding.recent_days", RECENT_DAYS)


def describe(eras: Eras) -> None:
    """Each history: its era, messages, first and last day, questions asked of it."""
    asked = Counter(q.conversation_id for q in eras.questions)
    for conversation, era in eras.eras.items():
        msgs = [m for m in eras.messages if m.conversation_id == conversation]
        print(f"  {conversation} {msgs[0].title:<22} {era:<9} {len(msgs):>4} messages "
              f"{msgs[0].sent_at:%Y-%m-%d} to {msgs[-1].sent_at:%Y-%m-%d}, {asked[conversation]:>3} questions")  # fmt: skip


def ask(reader, admin, q: Question, vec: list[float], corpus: dict) -> Asked:
    """Every method for one question; corpus: windows (chunk -> ordinals), ordinal_of (message id
    -> ordinal), indexed (ordinal -> "Sender: text"), by_ordinal (ordinal -> Message)."""
    windows, indexed = corpus["windows"], corpus["indexed"]
    packet = reader.execute(PACKET, (q.question, vec)).fetchone()[0]
    held = holds(packet["text"], q.facts[0])
    evidence = {c for c, ordinals in windows.items() if q.answers[0] in ordinals}
    cited = any(u.get("chunk_id") in evidence for u in packet["used"])
    archive = packet["report"].get("archive") or {}
    rows = reader.execute(MESSAGES, (q.question,), prepare=True).fetchall()
    found = [corpus["ordinal_of"][r[0]] for r in rows if r[0] is not None]
    hint = any(r[0] is None and r[1] and "band" in r[1] for r in rows)
    top = [r[0] for r in admin.execute(BM25, (q.question, 10), prepare=True)]
    near = [r[0] for r in admin.execute(NEAREST, (Vector(vec), 10), prepare=True)]
    outcomes = {
        "packet": Outcome(held, held, packet["tokens"]),
        "messages@10": outcome(q, found, indexed),
        "bm25@10": outcome(q, top, indexed),
        "vector@10": outcome(q, near, indexed),
    }
    answer = packet["report"].get("answer") or {}
    result = Asked(
        q, outcomes, bool(archive.get("open")), archive.get("why"), hint, cited, answer.get("found", True)
    )
    if not result.answered:
        result.unused = re.findall(r"'([^']*)'", (answer.get("why") or "").partition(", and none")[0])
    if not held:
        result.missed, rank = why_missed(reader, q, vec, evidence, cited, result.archive_open)
        m = corpus["by_ordinal"][q.answers[0]]
        result.detail = (
            f"{q.question!r} [{q.kind}; {m.sent_at:%Y-%m-%d} {m.sender}: {m.text}]\n"
            f"{result.missed}; archive open: {result.archive_open} ({result.archive_why}); "
            f"evidence window's rank in exo.search_json: {rank}; cited: "
            + "; ".join(u["citation"] for u in packet["used"])
            + "\n"
            + packet["text"][:1500]
        )
    return result


def archive_rule(why: str | None) -> str:
    """The rule report.archive.why names, without its word and counts."""
    return re.sub(r" '[^']*'", " W", re.sub(r" \(.*", "", why or ""))


def why_missed(
    reader, q: Question, vec, evidence: set, cited: bool, archive_open: bool
) -> tuple[str, int | None]:
    """Why the packet lacks the evidence: the archive stayed closed over archival evidence; else
    where the evidence's window ranks among the 25 exo.search_json returns for the same question."""
    found = reader.execute(SEARCH_JSON, (q.question, vec)).fetchone()[0]
    rank = next((r["rank"] for r in found["results"] if r["chunk_id"] in evidence), None)
    if q.kind == "old" and not archive_open:
        return "archive closed", rank
    if cited:
        return "cited, the excerpt left it out", rank
    if rank is None:
        return "not among the 25", rank
    return "among the 25, not cited", rank


def run(cfg: config.Config, endpoint: Endpoint, args: argparse.Namespace, run_dir: Path) -> None:
    with scratch_database(cfg, "bench_chat_eras") as name:
        with connect(admin_url(cfg, name), APP, autocommit=True) as admin:
            serve_embeddings_from(admin, endpoint.url)
            apply_settings(admin, args.settings)
            current_days, recent_days = band_days(admin)
        eras = generate(
            args.pairs, args.questions, args.seed, None, current_days, recent_days, args.old_share
        )
        export = write(eras, args.keep or run_dir)
        print(f"as of {eras.as_of}, banding.current_days {current_days}, banding.recent_days {recent_days}; "
              f"{len(eras.messages):,} messages, {len(eras.questions)} questions "
              f"({', '.join(f'{k} {n}' for k, n in Counter(q.kind for q in eras.questions).items())}) "
              f"in {export}", flush=True)  # fmt: skip
        describe(eras)
        import_export(cfg, name, export)
        began = time.perf_counter()
        done = Worker(cfg, dbname=name, once=True, queues=("embed",), poll_s=0.01).run().done["embed"]
        print(f"embed queue: {done:,} windows in {time.perf_counter() - began:.0f} s", flush=True)
        with connect(admin_url(cfg, name), APP, autocommit=True) as admin:
            print_corpus(admin)
            corpus = {
                "windows": {
                    chunk: set(ordinals)
                    for chunk, ordinals in admin.execute(
                        "select w.chunk_id, array_agg(m.external_id::int) from exo_private.chat_windows w "
                        "join exo_private.chat_messages m on m.id = any(w.message_ids) group by 1"
                    )
                },
                "ordinal_of": dict(
                    admin.execute("select id, external_id::int from exo_private.chat_messages")
                ),
                "indexed": {m.ordinal: f"{m.sender}: {m.text}" for m in eras.messages},
                "by_ordinal": {m.ordinal: m for m in eras.messages},
            }
            texts = [corpus["indexed"][m.ordinal] for m in eras.messages]
            baseline_table(admin, History(eras.messages, eras.questions), embed_all(endpoint, texts))
            q_vectors = embed_all(endpoint, [q.question for q in eras.questions])
            results, began = [], time.perf_counter()
            with connect(role_url(cfg, "exo_reader", name), APP, autocommit=True) as reader:
                for q, vec in zip(eras.questions, q_vectors, strict=True):
                    results.append(ask(reader, admin, q, vec, corpus))
            print(f"asked in {time.perf_counter() - began:.0f} s", flush=True)
    print_results(results, args.show)


def print_results(results: list[Asked], show: int) -> None:
    kinds = [*KINDS, "all"]
    rows = {k: [r for r in results if k in ("all", r.q.kind)] for k in kinds}
    print(f"\n== evidence message held, {len(results)} questions ("
          + ", ".join(f"{k} {len(rows[k])}" for k in KINDS) + "); tokens: medians")  # fmt: skip
    print(f"  {'method':<12}" + "".join(f"{k + ' recall':>15}{'tokens':>8}" for k in kinds))
    for method in METHODS:
        line = f"  {method:<12}"
        for k in kinds:
            outs = [r.outcomes[method] for r in rows[k]]
            line += f"{share([o.found for o in outs]):>15}{statistics.median(o.tokens for o in outs):>8.0f}"
        print(line)
    for k in kinds:
        rs = rows[k]
        why = Counter(archive_rule(r.archive_why) if r.archive_open else "closed" for r in rs)
        print(f"  {k}: packet archive open {sum(r.archive_open for r in rs)}/{len(rs)} ("
              + "; ".join(f"{n} {w}" for w, n in why.most_common()) + "); packet cites the evidence's window "
              f"{sum(r.cited for r in rs)}/{len(rs)}; search_messages left archival matches out "
              f"{sum(r.archival_hint for r in rs)}/{len(rs)}")  # fmt: skip
    missed = [r for r in results if r.missed]
    for k in KINDS:
        why = Counter(r.missed for r in missed if r.q.kind == k)
        silent = Counter(r.missed for r in missed if r.q.kind == k and not r.answered)
        print(f"  packet misses, {k}: "
              + (", ".join(f"{w} {n} ({silent[w]} saying nothing answers)" for w, n in why.most_common()) or "none"))  # fmt: skip
    silent = [r for r in results if not r.answered]
    unused = Counter(w for r in silent for w in r.unused)
    print(f"  packet says nothing in the memory answers: {len(silent)} ("
          + ", ".join(f"{k} {sum(r.q.kind == k for r in silent)}" for k in KINDS)
          + f"; {sum(bool(r.missed) for r in silent)} of them miss); the words it names as used by no open passage: "
          + ", ".join(f"{w!r} {n}" for w, n in unused.most_common()))  # fmt: skip
    for r in missed[:show]:
        print("  -- packet miss: " + r.detail.replace("\n", "\n     | "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10, help="two-person histories")
    parser.add_argument("--questions", type=int, default=150)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument(
        "--old-share", type=float, default=0.7, help="share of questions about archival facts"
    )
    parser.add_argument("--show", type=int, default=4, help="print this many packets that missed")
    parser.add_argument("--keep", type=Path, help="write chats.jsonl and questions.json here")
    add_setting_option(parser)
    args = parser.parse_args()
    args.settings = trial_settings(parser, args)
    cfg = config.load()
    run_dir = Path(tempfile.mkdtemp(prefix="exo-bench-chat-eras-"))
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {load_note()}", flush=True)
    began = time.perf_counter()
    with embedding_endpoint(cfg, run_dir) as endpoint:
        run(cfg, endpoint, args, run_dir)
    print(f"\nfinished in {time.perf_counter() - began:.0f} s with {load_note()}")


if __name__ == "__main__":
    main()
