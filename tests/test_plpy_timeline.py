"""How plpy/timeline.py reads an aggregate question (no database: the timeline's vocabulary and
names are given as functions, as build_packet passes them)."""

from __future__ import annotations

import json

import pytest
import timeline

ACTIVITIES = {"swim": ["swim", "swimming", "swam"], "run": ["run", "ran"], "travel": ["travel", "flew"], "lunch": ["lunch"], "walk": ["walk", "walked"], "meet": ["meet", "met"], "ride": ["ride", "riding"]}  # fmt: skip
PEOPLE = {"Ines", "Dr Hale"}
PLACES = {"Leeds", "the lido"}


SENTENCES = {"walk": "Walked to work and back."}


def vocabulary(words):
    found = {}
    for w in words:
        acts = [a for a, forms in ACTIVITIES.items() if w.rstrip("s") in {f.rstrip("s") for f in forms}]
        if acts:
            found[w] = acts
    return found


def held(words, activities, money):
    return [w for w in words if any(w in s.lower() for s in SENTENCES.values())]


def known(name):
    return (1 if name in PEOPLE else 0), (1 if name in PLACES else 0)


def read(query, span=None):
    reading = timeline.Reading(query, {"temporal": {"span": span}})
    reading.read_names(known)
    reading.read_words(vocabulary, held)
    return reading


@pytest.mark.parametrize(
    ("query", "kind", "measure"),
    [
        ("How many times did I go swimming in June?", "count", None),
        ("How often did I run last month?", "count", None),
        ("When did I last see Dr Hale?", "last", None),
        ("When was the first time I swam at the lido?", "first", None),
        ("How much did I spend in March?", "total", "amount"),
        ("How far did I run in total?", "total", "km"),
        ("How many km did I cycle in May?", "total", "km"),
        ("On average how long were my runs?", "average", "minutes"),
        ("When did I run the furthest?", "longest", "km"),
        ("Which city did I visit most?", "most", None),
        ("What is my rent?", None, None),
    ],
)
def test_the_kind_and_measure_of_a_question(query, kind, measure):
    reading = timeline.Reading(query, {})
    assert (reading.kind, reading.measure) == (kind, measure)


def test_names_are_read_as_people_or_places_and_months_are_not_names():
    assert timeline.names_in("When did I last see Dr Hale in March?") == ["Dr Hale"]
    reading = read("How many times did I see Ines in June?")
    assert (reading.person, reading.place, reading.activities) == ("Ines", None, None)  # "see" adds nothing
    reading = read("How many times did I travel to Leeds?")
    assert (reading.place, reading.activities) == ("Leeds", ["travel"])


def test_a_light_verb_beside_an_activity_adds_nothing_and_leftover_words_narrow_by_the_text():
    lunch = read("How many times did I meet someone for lunch?")
    assert (lunch.activities, lunch.about) == (["lunch"], None)  # "someone" is in no sentence
    work = read("How many times did I walk to work?")
    assert work.about == ["work"]
    horse = read("How often do I go horse riding?")
    assert horse.unknown == "horse riding"  # no ride of the timeline is told with "horse": no number
    assert read("How many times did I have lunch with friends?").unknown is None  # a kind of person
    rent = read("How much is my rent?")
    assert rent.unknown == "rent"  # no purchase tells of rent: not a timeline question
    spent = read("How much did I spend on things I bought?")
    assert (spent.unknown, spent.activities, spent.about) == (None, None, None)  # every purchase


def test_a_light_verb_no_event_was_told_with_narrows_nothing():
    reading = timeline.Reading("When did I last meet someone for coffee?", {})
    reading.read_names(known)
    reading.read_words(lambda words: {"coffee": ["coffee"]} if "coffee" in words else {}, lambda *_: [])
    assert (reading.activities, reading.about, reading.unknown) == (["coffee"], None, None)


def test_inflected_light_verbs_and_determiners_narrow_nothing():
    names = {"tennis": ["tennis"], "trip": ["travel"]}

    def reading(query):
        found = timeline.Reading(query, {})
        found.read_names(known)
        found.read_words(lambda words: {w: names[w] for w in words if w in names}, lambda *_: [])
        return found

    tennis = reading("How many minutes did I spend playing tennis?")
    assert (tennis.activities, tennis.unknown) == (["tennis"], None)
    trips = reading("How often did I take a trip to another city?")
    assert (trips.activities, trips.unknown) == (["travel"], None)


def test_a_which_question_asks_of_its_phrase_s_last_word_and_occasions_and_so_far_read_nothing():
    def reading(query):
        found = timeline.Reading(query, {})
        found.read_names(known)
        names = {"climbing": ["climb"], "dentist": ["dentist"]}
        found.read_words(lambda words: {w: names[w] for w in words if w in names}, lambda *_: [])
        return found

    wall = reading("Which climbing wall did I go to most?")
    assert (wall.group, wall.activities) == ("place", ["climb"])  # the wall, of climbing
    dentist = reading("How many dentist appointments did I have?")
    assert (dentist.activities, dentist.about, dentist.unknown) == (["dentist"], None, None)
    assert timeline.Reading("On average, how long did I run so far this year?", {}).measure == "minutes"


def test_a_question_of_an_activity_counts_its_synonyms_by_meaning():
    """timeline_section with the database's answers given: "cycling" names cycle, and biking and
    riding are as near in meaning as synonyms (lunching is not)."""
    asked = []

    def db(name, statement, types, args):
        asked.append(name)
        if name == "timeline_vocabulary":
            return [
                {"word": w, "activities": ["cycle"], "named": ["cycle"]} for w in args[0] if w == "cycling"
            ]
        if name == "timeline_activities":
            return [{"activity": a, "n": 1, "label": label} for a, label in
                    (("cycle", "cycling"), ("bike", "biking"), ("ride", "riding"), ("lunch", "lunching"))]  # fmt: skip
        if name == "timeline_shown_activities":
            return [{"activity": a} for a in sorted(args[4])]
        if name == "timeline_answer":
            figures = {"events": 3, "listed": [], "groups": [], "minutes": {"n": 3, "sum": 200, "avg": 66.7}}
            return [{"a": json.dumps(figures | {"km": {"n": 0}, "amount": {}})}]
        return []

    near = {"cycling": 1.0, "biking": 0.9, "riding": 0.79, "lunching": 0.24}
    _text, computed = timeline.timeline_section(
        db, "How long did I spend cycling in total?", {}, lambda _q, texts: [near[t] for t in texts]
    )
    assert computed["reading"].startswith("total of minutes of bike, cycle, ride "), computed
    assert "timeline_told_by" in asked
    # before the first event named cycle: "cycling" names none, its synonyms do
    _text, early = timeline.timeline_section(
        lambda name, *rest: [] if name == "timeline_vocabulary" else db(name, *rest),
        "How long did I spend cycling in total?",
        {},
        lambda _q, texts: [near[t] for t in texts],
    )
    assert early["reading"].startswith("total of minutes of bike, cycle, ride "), early
    _text, alone = timeline.timeline_section(db, "How long did I spend cycling in total?", {}, None)
    assert alone["reading"].startswith("total of minutes of cycle "), alone  # no embeddings: no synonyms


def test_which_most_groups_by_people_places_or_activities():
    assert read("Who did I have lunch with most?").group == "person"
    city = read("Which city did I visit most?")
    assert (city.group, city.activities) == ("place", ["travel"])
    pool = read("Which pool did I swim at most?")
    assert (pool.group, pool.activities) == ("place", ["swim"])
    anything = read("What did I do the most in June?")
    assert (anything.group, anything.activities, anything.category) == ("activity", None, None)
    exercise = read("What exercise did I do the most in June?")
    assert (exercise.group, exercise.category) == ("activity", "exercise")  # no activity of that name


def test_an_answer_line_states_only_what_was_computed():
    reading = read("How many times did I go swimming in June?", {"first": "2025-06-01", "last": "2025-06-30"})
    figures = {"events": 3, "listed": [], "groups": [], "minutes": {"n": 0}, "km": {"n": 0}, "amount": {}}
    assert timeline.answer_line(reading, figures) == "3 times"
    average = read("On average how long did I swim?")
    assert timeline.answer_line(average, figures) is None  # no event gave a duration: no number
    spent = read("How much did I spend?")
    figures["amount"] = {"GBP": {"sum": 42.5, "avg": 21.25, "n": 2}}
    assert timeline.answer_line(spent, figures) == "£42.50 in total over 3 times"


def test_a_which_question_over_named_days_lists_that_timeline():
    june = {"first": "2025-06-01", "last": "2025-06-30"}
    city = read("Which city did I visit in June?", june)
    assert (city.kind, city.group, city.activities) == ("list", "place", ["travel"])
    assert read("Which city did I visit?").kind is None  # no days named: a question for the evidence
    assert read("Did I swim in June?", june).kind is None  # not which, what, who or where
    figures = {"events": 2, "groups": [["Bruges", 1], ["Leeds", 1]], "listed": []}
    assert timeline.answer_line(city, figures) == "2 events: Bruges (1); Leeds (1)"
    # a money word lists the events of those days that tell an amount, of any activity
    day = {"first": "2025-03-04", "last": "2025-03-04"}
    for query in ("What did I pay for on 4 March?", "What did I buy on 4 March?"):
        paid = read(query, day)
        assert (paid.kind, paid.money, paid.activities, paid.category) == ("list", True, None, None), query
        assert "that tell an amount" in paid.described()
    assert read("What did I do on 4 March?", day).money is False
