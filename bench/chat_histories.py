"""Generated long-term chat histories with scripted facts and the questions they answer.

Each conversation is a two-person history between the owner (Sam Rivera) and one friend,
three months to a year long: sessions of 5-40 messages at realistic hours, small talk drawn
from varied templates, and scripted facts stated inside ordinary messages (sometimes as the
reply to a question, so the answering message alone lacks the question's words):

  home     where the friend lives, and later a move to another city (a changed fact)
  job      the friend's job, and later a new job: the offer, then the first day (changed)
  pet      the name of the friend's new pet
  book     a book recommended by one of the two
  trip     a trip proposed in one session and booked (with dates) in a later one
  event    an event on a stated date

Questions, of the kinds a long-term conversation benchmark asks, name the messages that
answer them by their ordinal in the export (the JSONL `message_id`, 1-based, in file order):

  single fact      "What is the name of Ana's dog?", "Who recommended The Quiet Harbour?"
  across sessions  "Where are Sam and Ana going on their trip, and when?" (two messages)
  when             "When did Ana move to Leeds?" (the message's date answers it),
                   "When is Ana's sister's wedding?" (the date in the message's text)
  what is true now "Where does Ana live now?" (the newest value; `old_answers` hold the old one)

Every answering message holds one of the question's `facts` (for a `when` question about a
message's own date, `answer_date` is that date). Deterministic for a seed and an end date.
The export is JSONL as docs/chat-formats.md describes; the questions are one JSON file.

    .venv/bin/python -m bench.chat_histories --conversations 10 --seed 7 --out DIR [--end 2026-06-30]
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

OWNER = "Sam Rivera"
OWNER_FIRST = "Sam"
END = date(2026, 6, 30)
EXPORT_NAME = "chats.jsonl"
QUESTIONS_NAME = "questions.json"
KINDS = ("single fact", "across sessions", "when", "what is true now")

FIRST_NAMES = [
    "Ana", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kavya",
    "Leon", "Maya", "Nikolai", "Olga", "Pablo", "Quinn", "Rosa", "Stefan", "Tomas", "Uma", "Viktor",
    "Wendy", "Xavier", "Yara", "Zane", "Amara", "Basil", "Carmen", "Dario", "Esme", "Felix", "Gwen",
    "Hamid", "Ingrid", "Jasper", "Keiko", "Lorenzo", "Mira", "Nadia", "Oscar", "Priya", "Rafael",
    "Saskia", "Theo", "Ursula", "Valentin", "Willa", "Yusuf", "Zora", "Aiden", "Beatriz", "Cyrus",
    "Delphine", "Emil", "Freya", "Gideon", "Hana", "Ivo", "Juno", "Kwame", "Lena", "Matteo", "Noor",
    "Otto", "Paloma", "Ravi", "Signe", "Tariq", "Ulla", "Vera", "Wim", "Ximena", "Yosef", "Zelda",
    "Anton", "Bianca", "Callum", "Dalia", "Ezra", "Fatima", "Goran", "Helga", "Idris", "Jana",
    "Kofi", "Lucia", "Marek", "Nell", "Orla", "Pedro", "Rania", "Silas", "Tilda", "Umar", "Vivian",
    "Wren", "Yannick", "Zainab", "Alba", "Boris", "Cleo", "Dev", "Elif", "Flora", "Gus", "Hedda",
    "Ilan", "Jade", "Kasper", "Liv", "Milo", "Nina", "Omar", "Pia",
]  # fmt: skip
LAST_NAMES = [
    "Calder", "Lopez", "Novak", "Okafor", "Berg", "Haddad", "Moreau", "Lindqvist", "Tanaka",
    "Fischer", "Costa", "Rahman", "Kowalski", "Brennan", "Duarte", "Virtanen", "Mensah", "Rossi",
    "Petrov", "Almeida", "Nakamura", "Horvat", "Quinlan", "Sato", "Weber", "Ibarra", "Jensen",
    "Kaur", "Laurent", "Mbeki", "Olsen", "Pereira", "Santos", "Varga", "Whitfield", "Yilmaz",
    "Zielinski",
]  # fmt: skip

CITIES = [
    "Leeds", "Lisbon", "Porto", "Utrecht", "Ghent", "Lyon", "Bristol", "Glasgow", "Valencia",
    "Krakow", "Tallinn", "Bergen", "Bologna", "Seville", "Graz", "Malmo", "Aarhus", "Cork",
    "Nantes", "Brno", "Ljubljana", "Freiburg", "Dundee", "Bilbao", "Turin", "Gdansk", "Salzburg",
    "Galway", "Leipzig", "Marseille",
]  # fmt: skip
TRIP_PLACES = [
    "Iceland", "Sicily", "the Azores", "Crete", "Kyoto", "Morocco", "the Dolomites", "Patagonia", "Lapland",
    "Madeira", "Sardinia", "Montenegro", "Vietnam", "Cornwall", "Skye", "Norway", "Tuscany", "Croatia",
    "Andalusia", "Slovenia", "Georgia", "Jordan", "the Faroes", "Corsica", "Provence", "the Alps",
]  # fmt: skip
JOBS = [
    ("a nurse", "St Mary's Hospital"),
    ("a data analyst", "Brightwave"),
    ("a teacher", "Hillcrest Primary"),
    ("a sound engineer", "Echo Lane Studios"),
    ("an architect", "Fold Architects"),
    ("a pastry chef", "Maison Rue"),
    ("a software developer", "Quarry Labs"),
    ("a librarian", "the Central Library"),
    ("a physiotherapist", "Motion Clinic"),
    ("a product designer", "Lumen Works"),
    ("an accountant", "Harper & Vale"),
    ("a vet", "Greenfield Vets"),
    ("a journalist", "the Evening Courier"),
    ("a lab technician", "Northwind Labs"),
    ("a carpenter", "Oakbeam Joinery"),
    ("a translator", "Polyglot House"),
]
PETS = [
    ("dog", "puppy"),
    ("cat", "kitten"),
    ("rabbit", "bunny"),
    ("parrot", "bird"),
]
PET_NAMES = [
    "Biscuit", "Pepper", "Miso", "Juniper", "Waffles", "Clementine", "Pickle", "Noodle", "Saffron",
    "Bramble", "Tofu", "Marlowe", "Pippin", "Olive", "Ziggy", "Fennel", "Mochi", "Basil", "Turnip",
    "Hazel", "Nacho", "Cosmo", "Truffle", "Figaro", "Dumpling", "Sprout",
]  # fmt: skip
BOOK_ADJ = [
    "Quiet", "Glass", "Salt", "Paper", "Hollow", "Silver", "Winter", "Borrowed", "Restless",
    "Painted", "Lantern", "Distant", "Sleeping", "Burning", "Folded", "Amber", "Northern",
    "Drowned", "Last", "Velvet",
]  # fmt: skip
BOOK_NOUN = [
    "Harbour", "Orchard", "Cartographer", "Lighthouse", "Archive", "Garden", "Mountain", "Tide",
    "Letters", "Cathedral", "Meridian", "Island", "River", "Clockmaker", "Atlas", "Station",
    "Orchestra", "Fox", "Winter", "Kingdom",
]  # fmt: skip
EVENTS = [
    ("my sister's wedding", "{first}'s sister's wedding"),
    ("the half marathon", "{first}'s half marathon"),
    ("my first gig with the band", "{first}'s first gig with the band"),
    ("my pottery exhibition", "{first}'s pottery exhibition"),
    ("my thesis defence", "{first}'s thesis defence"),
    ("our housewarming party", "{first}'s housewarming party"),
    ("the climbing club's first competition", "{first}'s climbing competition"),
    ("my cello recital", "{first}'s cello recital"),
]

FOODS = [
    "ramen", "tacos", "a curry", "pizza", "dumplings", "a roast", "pho", "pasta", "falafel",
    "a stew", "sushi", "paella",
]  # fmt: skip
SHOWS = [
    "that new detective series", "the baking show", "a documentary about octopuses",
    "the cooking competition", "an old western", "the space drama everyone talks about",
    "a Korean thriller", "the nature series",
]  # fmt: skip
ACTIVITIES = [
    "went for a long walk", "did a big grocery run", "cleaned the whole flat", "fixed the bike",
    "went swimming", "tried a yoga class", "repotted all the plants", "baked bread",
    "played board games", "went to the market",
]  # fmt: skip
WEATHER = [
    "pouring with rain", "freezing", "lovely and sunny", "so windy", "grey and drizzly",
    "weirdly warm", "foggy all morning",
]  # fmt: skip
COLLEAGUES = ["Priti", "Marco", "Jess", "Old Tom", "Dana", "Kieran", "Lou", "Beth", "Raj", "Nico"]
CAFES = ["Bean There", "the Copper Kettle", "Little Fern", "Grind", "the bakery on Mill Street", "Hearth"]
OPENERS = ["", "", "", "", "Haha. ", "Ok. ", "Honestly! ", "Hmm. ", "Right. ", "Oh! "]
CLOSERS = ["", "", "", "", " :)", " lol", " 😅", " Anyway.", " How about you?", " x"]
WEEKDAYS = [
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
]  # fmt: skip

FILLER = [
    "Morning! How did you sleep?",
    "Hey {other}, how's your week going?",
    "Not bad, just busy. You?",
    "It's {weather} here today.",
    "Ugh, it's been {weather} all day, I didn't want to leave the house.",
    "I had {food} for dinner, so good.",
    "Thinking about getting {food} tonight, too tired to cook.",
    "Have you watched {show}? I'm hooked.",
    "I fell asleep halfway through {show} last night haha",
    "This weekend I {activity}. Felt productive for once.",
    "Yesterday I {activity}, now I need a nap.",
    "Ha, that sounds like me.",
    "Honestly same.",
    "lol yes",
    "Oh no! Are you ok?",
    "That's so annoying, sorry.",
    "Sounds lovely.",
    "Fair enough!",
    "Haha I can picture it.",
    "Can't talk long, on the bus.",
    "Sorry, was in a meeting. What's up?",
    "Are we still on for {weekday}?",
    "Yes! {weekday} works. Same place as last time?",
    "Maybe {weekday} instead? Something came up.",
    "No worries, {weekday} is fine too.",
    "My neighbour's dog barked all night again.",
    "Work has been a lot this week, too many meetings.",
    "I started a new book but it's slow going.",
    "Did you see the news about the train strikes?",
    "My phone screen cracked this morning. Great start.",
    "I need a holiday so badly.",
    "The coffee place on the corner closed, I'm devastated.",
    "Thanks for yesterday, it was really fun.",
    "Miss you! We should catch up properly soon.",
    "Mum called, she says hi.",
    "I've been trying to drink less coffee. Not going well.",
    "Just got back from the gym, everything hurts.",
    "Do you have a good recipe for {food}?",
    "Traffic was awful today.",
    "Haha no way",
    "Wait really?",
    "I'll send you the photos later.",
    "Good night! Talk tomorrow.",
    "Night!",
    "Happy {today}!",
    "I'm so tired today.",
    "Exactly what I was thinking.",
    "Oh nice, how was it?",
    "It was fine, a bit crowded.",
    "We should go back there sometime.",
    "Agreed, that place was amazing.",
    "{colleague} from work asked about you the other day.",
    "{colleague} brought cake to the office for no reason, best day.",
    "Went to {cafe} this morning, the queue was out the door.",
    "Have you been to {cafe}? Apparently it's the place for {food}.",
    "I'm meeting {colleague} at {cafe} at {hour}, want to join?",
    "Can't, I've got a dentist appointment at {hour}.",
    "The train was {minutes} minutes late again.",
    "Only {minutes} minutes left of this meeting, I can do it.",
    "Running {minutes} minutes late, sorry!",
    "It's {weather} again, so I {activity} instead of going out.",
    "Finished {show} finally. That ending!",
    "Should I get {food} or {food2}? Help.",
    "{food2}, always {food2}.",
    "Went to a pub quiz with {colleague} last night, we came {place_ordinal}.",
    "My sister visited on {weekday}, we {activity}.",
    "The heating broke again, the landlord says {weekday}.",
    "Are you watching the football tonight?",
    "I might skip the gym, it's {weather}.",
    "Guess who I bumped into at {cafe}? {colleague}!",
    "Remind me later, I'll forget otherwise.",
]


@dataclass
class Message:
    ordinal: int
    conversation_id: str
    title: str
    sender: str
    is_owner: bool
    sent_at: datetime
    text: str

    def record(self, first_of_conversation: bool) -> dict:
        out = {"conversation_id": self.conversation_id}
        if first_of_conversation:
            out["conversation_title"] = self.title
        out.update(
            message_id=str(self.ordinal),
            sender=self.sender,
            sent_at=self.sent_at.isoformat(),
            text=self.text,
        )
        if self.is_owner:
            out["is_owner"] = True
        return out


@dataclass
class Question:
    id: str
    kind: str
    conversation_id: str
    question: str
    answers: list[int]
    """Ordinals of the messages that answer it (across sessions: all are needed)."""
    facts: list[str]
    """Strings an answering message holds (each answer holds at least one; all are covered)."""
    answer_date: str | None = None
    """For a `when` question answered by a message's own date: that date (ISO)."""
    old_answers: list[int] = field(default_factory=list)
    """For a changed fact: the messages that state the old value."""
    old_facts: list[str] = field(default_factory=list)


@dataclass
class History:
    messages: list[Message]
    questions: list[Question]


@dataclass
class _Beat:
    """Consecutive scripted messages placed in one session; `answer` is the one questions cite."""

    lines: list[tuple[bool, str]]  # (said by the friend, text)
    answer: int = 0  # index in lines


def fill(rng: random.Random, template: str, other: str, at: datetime) -> str:
    food, food2 = rng.sample(FOODS, 2)
    text = template.format(
        other=other,
        food=food,
        food2=food2,
        colleague=rng.choice(COLLEAGUES),
        cafe=rng.choice(CAFES),
        hour=f"{rng.randint(1, 7)}{rng.choice(['', ':30'])}",
        minutes=rng.choice([5, 10, 15, 20, 25, 40]),
        place_ordinal=rng.choice(["second", "third", "last", "fifth"]),
        show=rng.choice(SHOWS),
        activity=rng.choice(ACTIVITIES),
        weather=rng.choice(WEATHER),
        weekday=rng.choice(WEEKDAYS),
        today=WEEKDAYS[at.weekday()],
    )
    text = text[0].upper() + text[1:]
    return rng.choice(OPENERS) + text + rng.choice(CLOSERS)


def _day_text(day: date) -> str:
    return f"{day.day} {day.strftime('%B')}"


class _Script:
    """One friend's scripted facts, their beats and questions."""

    def __init__(self, rng: random.Random, first: str, used: dict[str, set]) -> None:
        def pick(pool, kind):
            free = [x for x in pool if x not in used.setdefault(kind, set())] or list(pool)
            choice = rng.choice(free)
            used[kind].add(choice)
            return choice

        self.rng, self.first = rng, first
        self.city_old, self.city_new = rng.sample(CITIES, 2)
        self.job_old, self.job_new = rng.sample(JOBS, 2)
        self.pet, self.pet_word = rng.choice(PETS)
        self.pet_name = pick(PET_NAMES, "pet")
        self.book = "The " + pick([f"{a} {n}" for a in BOOK_ADJ for n in BOOK_NOUN], "book")
        self.book_by_friend = rng.random() < 0.5
        self.trip = pick(TRIP_PLACES, "trip")
        self.event, self.event_question = rng.choice(EVENTS)

    def beats(self) -> dict[str, _Beat]:
        r = self.rng
        old_job, old_place = self.job_old
        new_job, new_place = self.job_new
        home = r.choice(
            [
                _Beat([(True, f"The flat here in {self.city_old} is tiny but I love the neighbourhood.")]),
                _Beat(
                    [
                        (False, "Remind me, where are you living these days?"),
                        (True, f"Still in {self.city_old}! Near the old market."),
                    ]
                ),
                _Beat(
                    [
                        (
                            True,
                            f"Walked along the river in {self.city_old} today, I never get tired of it here.",
                        )
                    ]
                ),
            ]
        )
        home.answer = len(home.lines) - 1
        move = r.choice(
            [
                _Beat([(True, f"Big news: I moved to {self.city_new} today! The new flat is lovely."), (False, "What?! That's huge, congratulations!")]),
                _Beat([(False, "How's the packing going?"), (True, f"Done at last. First night in the new place in {self.city_new}, boxes everywhere.")]),
                _Beat([(True, f"Officially a {self.city_new} resident now, the move went fine."), (False, "Yay! Send pictures of the new place.")]),
            ]
        )  # fmt: skip
        move.answer = next(i for i, (_, t) in enumerate(move.lines) if self.city_new in t)
        job = r.choice(
            [
                _Beat([(True, f"Long shift today. Being {old_job} at {old_place} is exhausting sometimes.")]),
                _Beat([(False, "How's work?"), (True, f"Busy. {old_place} is short-staffed again, I'm covering for two.")]),
                _Beat([(True, f"My boss at {old_place} gave me a new project, so that's fun.")]),
            ]
        )  # fmt: skip
        job.answer = next(i for i, (_, t) in enumerate(job.lines) if old_place in t)
        offer = r.choice(
            [
                _Beat([(True, f"I got the job!! I'll be {new_job} at {new_place}."), (False, "I knew you would! So proud of you.")]),
                _Beat([(False, "Any news from that interview?"), (True, f"They offered it to me! {new_place}, starting next month.")]),
            ]
        )  # fmt: skip
        offer.answer = next(i for i, (_, t) in enumerate(offer.lines) if new_place in t)
        start = r.choice(
            [
                _Beat([(True, f"First day at {new_place} today. Everyone seems nice."), (False, "How did it go?")]),
                _Beat([(False, "Good luck today!"), (True, f"Thanks! Just finished my first day at {new_place}, my head is spinning.")]),
            ]
        )  # fmt: skip
        start.answer = next(i for i, (_, t) in enumerate(start.lines) if new_place in t)
        pet = r.choice(
            [
                _Beat([(True, f"We got a {self.pet_word}!! We named him {self.pet_name}."), (False, "Oh my god, photos please")]),
                _Beat([(False, f"Did you pick a name for the {self.pet} yet?"), (True, f"{self.pet_name}! It suits him perfectly.")]),
                _Beat([(True, f"{self.pet_name} chewed through my charger again. Why did I get a {self.pet}.")]),
            ]
        )  # fmt: skip
        pet.answer = next(i for i, (_, t) in enumerate(pet.lines) if self.pet_name in t)
        recommender = self.book_by_friend
        book = r.choice(
            [
                _Beat([(recommender, f"You have to read {self.book}. I couldn't put it down."), (not recommender, "Adding it to my list!")]),
                _Beat([(not recommender, "Any good books lately?"), (recommender, f"{self.book}, honestly the best thing I've read this year.")]),
            ]
        )  # fmt: skip
        book.answer = next(i for i, (_, t) in enumerate(book.lines) if self.book in t)
        propose = r.choice(
            [
                _Beat([(False, f"We should finally do that trip. What about {self.trip}?"), (True, "Yes!! Let's look at dates.")]),
                _Beat([(True, f"Ok I've decided, our trip this year is {self.trip}. No arguments."), (False, "Fine by me haha")]),
            ]
        )  # fmt: skip
        propose.answer = next(i for i, (_, t) in enumerate(propose.lines) if self.trip in t)
        booked = _Beat([(False, "BOOKED. We fly out on {trip_date}, back a week later."), (True, "I can't believe it's actually happening")])  # fmt: skip
        booked.answer = 0
        event = r.choice(
            [
                _Beat([(True, "Save the date: " + self.event + " is on {event_date}!"), (False, "It's in my calendar.")]),
                _Beat([(False, "When is " + self.event.replace("my ", "your ").replace("our ", "your ") + " again?"), (True, "{event_date}! Don't forget.")]),
            ]
        )  # fmt: skip
        event.answer = next(i for i, (_, t) in enumerate(event.lines) if "{event_date}" in t)
        return {
            "home": home,
            "move": move,
            "job": job,
            "offer": offer,
            "start": start,
            "pet": pet,
            "book": book,
            "propose": propose,
            "booked": booked,
            "event": event,
        }


def session_times(rng: random.Random, start: date, span_days: int, sessions: int) -> list[datetime]:
    days = sorted(rng.sample(range(span_days), min(sessions, span_days)))
    while len(days) < sessions:  # more sessions than days: a second session later the same day
        days.append(rng.choice(days))
    days.sort()
    hours = [7, 8, 9, 12, 13, 17, 18, 19, 20, 20, 21, 21, 22]
    out = []
    for d in days:
        at = datetime.combine(start + timedelta(days=d), time(rng.choice(hours), rng.randrange(60)), UTC)
        if out and at <= out[-1] + timedelta(hours=2):
            at = out[-1] + timedelta(hours=3)
        out.append(at)
    return out


def _placement(rng: random.Random, sessions: int) -> dict[str, int]:
    """A session for each beat: old values early, changes late, the trip booked after it is proposed."""

    def within(lo: float, hi: float) -> int:
        return rng.randint(int(lo * (sessions - 1)), int(hi * (sessions - 1)))

    place = {
        "home": within(0.0, 0.3),
        "job": within(0.0, 0.3),
        "move": within(0.6, 0.9),
        "offer": within(0.5, 0.7),
        "pet": within(0.2, 0.8),
        "book": within(0.0, 1.0),
        "propose": within(0.1, 0.5),
        "event": within(0.3, 0.9),
    }
    place["start"] = rng.randint(place["offer"] + 1, sessions - 1)
    place["booked"] = rng.randint(place["propose"] + 1, sessions - 1)
    return place


def _conversation(
    rng: random.Random, index: int, first: str, last: str, end: date, used: dict, ordinal: int
) -> tuple[list[Message], list[Question]]:
    friend = f"{first} {last}"
    conv_id = f"chat-{index:03d}-{first.lower()}"
    target = rng.randint(150, 300)
    sizes = []
    while sum(sizes) < target:
        sizes.append(rng.randint(5, 40))
    sizes[-1] = max(5, sizes[-1] - (sum(sizes) - target))
    while len(sizes) < 6:  # enough sessions for facts that change
        sizes.append(rng.randint(5, 15))
    span = rng.randint(90, 365)
    times = session_times(rng, end - timedelta(days=span), span, len(sizes))
    script = _Script(rng, first, used)
    beats = script.beats()
    place = _placement(rng, len(sizes))
    by_session: dict[int, list[str]] = {}
    for name, s in place.items():
        by_session.setdefault(s, []).append(name)

    messages: list[Message] = []
    cited: dict[str, Message] = {}
    stated: dict[str, str] = {}  # the dates the trip and event beats name
    owner_speaks = rng.random() < 0.5
    last_filler = ""
    for s, (size, at) in enumerate(zip(sizes, times, strict=True)):
        names = by_session.get(s, [])
        scripted = sum(len(beats[n].lines) for n in names)
        units: list[str | None] = [None] * max(2, size - scripted)  # None: one filler message
        for n in names:
            units.insert(rng.randint(1, len(units)), n)
        for name in units:
            lines = [(None, "")] if name is None else beats[name].lines
            for i, (by_friend, text) in enumerate(lines):
                if by_friend is None:  # filler: mostly alternate, sometimes two in a row
                    owner_speaks = owner_speaks if rng.random() < 0.25 else not owner_speaks
                    template = rng.choice([t for t in FILLER if t != last_filler])
                    last_filler = template
                    text = fill(rng, template, first if owner_speaks else OWNER_FIRST, at)
                else:
                    owner_speaks = not by_friend
                    ahead = {"trip_date": 30 + rng.randrange(40), "event_date": 10 + rng.randrange(50)}
                    for slot, days in ahead.items():
                        if "{" + slot + "}" in text:
                            stated[name] = _day_text(at.date() + timedelta(days=days))
                            text = text.replace("{" + slot + "}", stated[name])
                msg = Message(
                    ordinal, conv_id, friend, OWNER if owner_speaks else friend, owner_speaks, at, text
                )
                messages.append(msg)
                if name is not None and beats[name].answer == i:
                    cited[name] = msg
                ordinal += 1
                at += timedelta(seconds=rng.randint(20, 420))

    def ids(*keys: str) -> list[int]:
        return [cited[k].ordinal for k in keys]

    who = friend.split()[0]
    _job_new, place_new = script.job_new
    _job_old, place_old = script.job_old
    trip_date, event_date = stated["booked"], stated["event"]
    q = [
        Question(f"{conv_id}/home-now", "what is true now", conv_id, f"Where does {who} live now?", ids("move"),
                 [script.city_new], old_answers=ids("home"), old_facts=[script.city_old]),
        Question(f"{conv_id}/move-when", "when", conv_id, f"When did {who} move to {script.city_new}?", ids("move"),
                 [script.city_new], answer_date=cited["move"].sent_at.date().isoformat()),
        Question(f"{conv_id}/job-now", "what is true now", conv_id, f"Where does {who} work now?",
                 ids("offer", "start"), [place_new], old_answers=ids("job"), old_facts=[place_old]),
        Question(f"{conv_id}/job-when", "when", conv_id, f"When did {who} start the new job at {place_new}?",
                 ids("start"), [place_new], answer_date=cited["start"].sent_at.date().isoformat()),
        Question(f"{conv_id}/pet", "single fact", conv_id, f"What is the name of {who}'s {script.pet}?",
                 ids("pet"), [script.pet_name]),
        Question(f"{conv_id}/book", "single fact", conv_id, f"Who recommended {script.book}, {who} or Sam?",
                 ids("book"), [script.book]),
        Question(f"{conv_id}/trip", "across sessions", conv_id,
                 f"Where are Sam and {who} going on their trip, and when do they fly?", ids("propose", "booked"),
                 [script.trip, trip_date]),
        Question(f"{conv_id}/event", "when", conv_id,
                 f"When is {script.event_question.format(first=who)}?", ids("event"), [event_date]),
    ]  # fmt: skip
    return messages, q


def generate(conversations: int, seed: int, end: date = END, max_messages: int | None = None) -> History:
    """`conversations` histories (or as many as reach max_messages, the last one cut short)."""
    rng = random.Random(seed)
    firsts = rng.sample(FIRST_NAMES, min(conversations, len(FIRST_NAMES)))
    used: dict[str, set] = {}
    messages: list[Message] = []
    questions: list[Question] = []
    index = 0
    while index < conversations or (max_messages is not None and len(messages) < max_messages):
        first = firsts[index] if index < len(firsts) else rng.choice(FIRST_NAMES)
        msgs, qs = _conversation(rng, index, first, rng.choice(LAST_NAMES), end, used, len(messages) + 1)
        messages.extend(msgs)
        questions.extend(qs)
        index += 1
    if max_messages is not None and len(messages) > max_messages:
        messages = messages[:max_messages]
        kept = {m.ordinal for m in messages}
        questions = [q for q in questions if set(q.answers + q.old_answers) <= kept]
    return History(messages, questions)


def write_export(messages: list[Message], out: Path) -> Path:
    """The generic JSONL export of `messages` (docs/chat-formats.md) as out/chats.jsonl, each
    conversation's title on its first message."""
    out.mkdir(parents=True, exist_ok=True)
    export = out / EXPORT_NAME
    seen: set[str] = set()
    with export.open("w", encoding="utf-8") as fh:
        for m in messages:
            fh.write(json.dumps(m.record(m.conversation_id not in seen)) + "\n")
            seen.add(m.conversation_id)
    return export


def write(history: History, out: Path) -> tuple[Path, Path]:
    """The JSONL export and the questions file, in out."""
    export, questions = write_export(history.messages, out), out / QUESTIONS_NAME
    questions.write_text(
        json.dumps([asdict(q) for q in history.questions], indent=1) + "\n", encoding="utf-8"
    )
    return export, questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--end", type=date.fromisoformat, default=END, help="the newest day of the histories")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    history = generate(args.conversations, args.seed, args.end)
    export, questions = write(history, args.out)
    print(f"{len(history.messages)} messages in {args.conversations} conversations: {export}")
    print(f"{len(history.questions)} questions: {questions}")


if __name__ == "__main__":
    main()
