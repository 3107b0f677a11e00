"""The timeline (issue 31): events read by syntax from the owner's notes and chat lines
(extraction/events.py), stored per document by the worker's events queue, read through
exo.events / exo.event_counts, and aggregate questions answered in the packet's Timeline section
(plpy/timeline.py) from SQL, with care and as_of as every reader path has them."""

from __future__ import annotations

import json
from datetime import date

import pytest
from click.testing import CliRunner
from support.db import use_embeddings
from support.files import write
from support.timeline import answer, ingest_diary, packet

from exocortex.cli import main, output
from exocortex.extraction import events
from exocortex.ingest import pipeline
from exocortex.ingest.chat import import_chat
from exocortex.worker.loop import Worker

DAY = date(2025, 6, 24)  # a Tuesday


def read(text: str) -> list[dict]:
    return [e.to_json() for e in events.text_events(text, DAY, frozenset({"robin"}))]


@pytest.mark.parametrize(
    ("text", "activity"),
    [
        ("Swam 40 lengths at Millbrook pool.", "swim"),
        ("Went swimming: 30 lengths at the lido.", "swim"),
        ("I went for a swim before work.", "swim"),
        ("Went for a run along the canal.", "run"),
        ("Morning run: 7.1 km around Hollins Park.", "run"),
        ("Ran 5 km.", "run"),
        ("Had lunch with Nadia Okafor at the Blue Door.", "lunch"),
        ("Maya and I had dinner at Sakura.", "dinner"),
        ("Dentist appointment at 9:15 with Dr Okafor: all fine.", "dentist"),
        ("Bouldering session: 12 routes at the Foundry.", "bouldering"),
        ("Played tennis with Owen Brennan for 55 min.", "tennis"),
        ("Cycled 42.5 km out to Kelby and back.", "cycle"),
    ],
)
def test_each_phrasing_names_one_activity(text, activity):
    assert [e["activity"] for e in read(text)] == [activity]


def test_measures_people_and_places_are_read_from_the_sentence():
    (run,) = read("Went for a run, 5.2 km along the canal, an hour and a half.")
    assert (run["km"], run["minutes"]) == (5.2, 90.0)
    (swim,) = read("Went swimming: 30 lengths at the lido in 1h15.")
    assert (swim["minutes"], swim["count"], swim["count_unit"]) == (75.0, 30.0, "length")
    (lunch,) = read("Had lunch with Nadia Okafor at the Blue Door.")
    assert lunch["people"] == ["Nadia Okafor"] and lunch["place"] == "Blue Door"
    (dinner,) = read("Maya and I had dinner at Sakura.")
    assert dinner["people"] == ["Maya"] and dinner["place"] == "Sakura"  # "at" names a place
    (scarf,) = read("Ordered a red scarf online (14.99 pounds).")
    assert (scarf["amount"], scarf["currency"]) == (14.99, "GBP")
    (trip,) = read("Caught the early coach to Porto for a concert.")
    assert (trip["activity"], trip["place"]) == ("travel", "Porto")
    (miles,) = read("Ran 3 miles.")
    assert miles["km"] == pytest.approx(4.83, abs=0.01)


def test_relative_days_move_the_event_from_the_notes_day():
    (gym,) = read("Yesterday I went to the gym.")
    assert (gym["day"], gym["day_source"]) == ("2025-06-23", "relative")
    (film,) = read("We watched Dune last night.")
    assert film["day"] == "2025-06-23"
    (walk,) = read("On Friday I walked to Pike Hill.")
    assert walk["day"] == "2025-06-20"  # the Friday before the Tuesday


def test_questions_denials_plans_and_other_peoples_doings_are_no_events():
    assert read("Did I swim today?") == []
    assert read("I didn't go swimming.") == []
    assert read("I will run tomorrow.") == []
    assert read("I should book the dentist.") == []
    assert read("Maya ran a marathon.") == []
    assert read("Quiet evening at home.") == []


@pytest.mark.parametrize(
    ("text", "activity"),
    [
        # an opening clause with no subject before one that has it: the verb is the owner's
        ("Met Tomas for supper at Casa Lina, we talked till late.", "supper"),
        # a fragment before the owner's clause, whatever the parser hangs it on
        ("Brunch with Hamid (the Old Mill), we split a cake.", "brunch"),
        ("Supper at Casa Lina with Hamid; we talked till late.", "supper"),
        # the role a generic noun stands for, in apposition or before it, not a word after it
        ("Appointment with Ms Varga (osteopath) at 4pm, all fine.", "osteopath"),
        ("Vet appointment at noon with Dr Ruiz: booster done.", "vet"),
        # a fragment joined to a clause with its own company and measure
        ("Packed my bag, badminton with Leon Marsh, forty minutes.", "badminton"),
    ],
)
def test_fragments_and_opening_clauses_beside_another_clause_are_read(text, activity):
    assert activity in [e["activity"] for e in read(text)]


def test_each_clause_keeps_its_own_measures_people_and_places():
    (pack, badminton) = read("Packed my bag, badminton with Leon Marsh, forty minutes.")
    assert (pack["minutes"], badminton["minutes"], badminton["people"]) == (None, 40.0, ["Leon Marsh"])
    (swim, run) = read("Swam 30 lengths, 45 minutes, and then ran 5 km.")
    assert (swim["minutes"], swim["km"], run["minutes"], run["km"]) == (45.0, None, None, 5.0)
    talk, supper = read("Met Tomas for supper at Casa Lina, we talked till late.")
    assert (supper["people"], supper["place"]) == (["Tomas"], "Casa Lina")
    assert (talk["people"], talk["place"]) == ([], None)  # one meeting, counted once with Tomas


def test_subjects_of_a_clause_and_words_alone_are_no_fragments():
    chat = lambda text: [e.activity for e in events.text_events(text, DAY, note=False)]  # noqa: E731
    assert chat("Chocolate milk is delicious.") == []
    assert chat("Water slides are more intense for me than roller coasters.") == []
    assert chat("Granted, that doesn't make it easy.") == []
    assert chat("Or this one person who I believe is determined not to talk to me.") == []


def test_going_on_foot_up_or_over_a_named_place_is_a_hike_and_the_place_is_read():
    (snowdon,) = read("Walked up Snowdon with Gwen, four hours.")
    assert (snowdon["activity"], snowdon["place"], snowdon["minutes"]) == ("hike", "Snowdon", 240.0)
    assert "walk" in snowdon["forms"]  # still a walk to a question of walks
    assert [(e["activity"], e["place"]) for e in read("Long walk over Haystacks, three hours.")] == [
        ("hike", "Haystacks")
    ]
    assert [e["activity"] for e in read("Went over Catbells on foot, ninety minutes.")] == ["hike"]
    assert [e["activity"] for e in read("Walked to the bakery.")] == ["walk"]  # no named place climbed
    (tryfan,) = read("Scrambled to the summit of Tryfan in 3 hours.")
    assert tryfan["place"] == "Tryfan"  # a place's part names the place


def test_a_verb_of_its_own_doing_goes_to_a_place_not_on_a_trip():
    (row,) = read("Rowed 12 km out to Inchmurrin and back.")
    assert (row["activity"], row["place"], row["km"]) == ("row", "Inchmurrin", 12.0)
    (flight,) = read("Flew to Lisbon for a wedding.")
    assert (flight["activity"], flight["place"]) == ("travel", "Lisbon")
    chat = [e.activity for e in events.text_events("Just hang on for dear life", DAY, note=False)]
    assert chat == []  # a base-form verb after a modifier is a noun only with a measure


def test_an_outing_is_no_trip_and_a_joined_count_is_the_first_clause_s():
    (kayak,) = read("Took the kayak 8 km out to Inchcolm, two hours.")
    assert (kayak["activity"], kayak["place"], kayak["km"], kayak["minutes"]) == (
        "kayak",
        "Inchcolm",
        8.0,
        120.0,
    )
    (rowing,) = read("Went rowing and did 6 laps at the Marina (an hour).")
    assert (rowing["activity"], rowing["minutes"], rowing["count"], rowing["place"]) == (
        "row",
        60.0,
        6.0,
        "Marina",
    )
    badminton = [
        e
        for e in read("Booked a court: badminton with Leon Marsh, 45 minutes.")
        if e["activity"] == "badminton"
    ]
    assert [(e["minutes"], e["people"]) for e in badminton] == [(45.0, ["Leon Marsh"])]


def test_an_occasion_gone_through_is_the_doing_and_a_trip_is_not_named_by_what_it_was_for():
    (yoga,) = read("Stretched through vinyasa yoga with Dev for 45 minutes.")
    assert (yoga["activity"], yoga["minutes"]) == ("yoga", 45.0)
    assert [e["activity"] for e in read("Sat through two meetings about the budget.")] == ["meeting"]
    assert [e["activity"] for e in read("I also walked through a sewer.")] == ["walk"]  # a place gone through
    (trip,) = read("Day trip to Galway: a family lunch.")
    assert (trip["activity"], "lunch" in trip["forms"]) == ("travel", False)
    (train,) = read("Took the train to Leeds for a conference.")
    assert "train" in train["forms"]  # what it went by names it


def test_a_label_compound_is_a_noun_and_a_capitalised_word_beside_i_a_person():
    (walk,) = read("Dog walk, an hour along the dunes.")
    assert (walk["activity"], walk["minutes"]) == ("walk", 60.0)
    assert read("Cats rule, dogs drool.") == []  # a plural subject: a clause, no label
    (supper,) = read("Ines and I had supper at the Quay.")  # "Ines" tagged a plural noun
    assert (supper["activity"], supper["people"]) == ("supper", ["Ines"])


def test_a_note_s_records_are_no_fragments():
    assert read("ZFS snapshots every hour, kept 48 hours.") == []  # a subject, no company, place or time
    assert "result" not in [
        e["activity"] for e in read("Results from the 2018 clean-up: 14 indexes dropped.")
    ]
    assert "volume" not in [e["activity"] for e in read("The WAL volume on db-prod-03 reached 94% today.")]
    assert "fuel" not in [
        e["activity"] for e in read("Ran the numbers: fuel €900, insurance €486.")
    ]  # prices


def test_a_state_after_a_counted_doing_tells_the_doing():
    (laps,) = read("Stiff shoulders after 20 laps at Parkside baths, 50 minutes.")
    assert (laps["activity"], laps["count"], laps["minutes"]) == ("lap", 20.0, 50.0)
    assert [e["activity"] for e in read("Good coffee after the meeting.")] == ["coffee"]  # nothing counted


def test_a_stop_after_a_unit_ends_its_sentence():
    got = read("Swam 30 lengths in 55 min. Dinner with Emeka at Sakura. Rowed 6 km. Lunch at the Anchor.")
    assert [(e["activity"], e["minutes"], e["people"], e["place"]) for e in got] == [
        ("swim", 55, [], None),
        ("dinner", None, ["Emeka"], "Sakura"),
        ("row", None, [], None),
        ("lunch", None, [], "Anchor"),
    ]  # the dinner's company and place are not the swim's


def test_seeing_a_professional_by_title_is_an_appointment_with_them():
    def told(text):
        return [(e["activity"], e["people"]) for e in read(text)]

    # the title tells an appointment, not the kind: a role the sentence does not say
    assert told("Went to see Dr Lindqvist about the rash.") == [("appointment", ["Dr Lindqvist"])]
    assert told("Visited Dr. Patel for my annual checkup.")[0][0] == "appointment"
    assert told("Dr Moreau had a look at my gums at 8:45, nothing to worry about.") == [
        ("appointment", ["Dr Moreau"])
    ]  # a professional seeing to what is the owner's
    assert told("Nurse Adeyemi dressed my knee.") == [("nurse", ["Nurse Adeyemi"])]  # a title of a role
    assert told("Dr Hale said my mother was fine.") == []  # what they told, not what they saw to
    assert told("Saw Mr Hughes about the fence.") == [("see", ["Mr Hughes"])]  # no profession
    assert told("Met Dr Hale for lunch.")[0][0] == "lunch"
    # a kind of occasion is told with the occasion's word, which its kinds are known by
    assert read("Physio session at 10:30 with Ines Ruiz, an hour.")[0]["forms"] == ["physio", "session"]


def test_verb_lemmas_come_from_spacys_tables():
    assert [events.verb_lemma(w) for w in ("swam", "swimming", "ran", "cycled", "rode")] == [
        "swim", "swim", "run", "cycle", "ride",
    ]  # fmt: skip
    assert events.verb_lemma("lido") is None


# -- the timeline in the database ---------------------------------------------------------

NOTES = {
    "2025-03-02.md": "---\ndate: 2025-03-02\n---\nSwam 40 lengths at Millbrook pool, 45 minutes. Spent £12.50 on a teapot.",
    "2025-03-09.md": "---\ndate: 2025-03-09\n---\nWent swimming: 30 lengths in half an hour. Had lunch with Nadia Okafor.",
    "2025-03-20.md": "---\ndate: 2025-03-20\n---\nSaw Dr Hale about my cough; all fine. Ran 5 km.",
    "2025-04-02.md": "---\ndate: 2025-04-02\n---\nWent for a swim, an hour. Bought a lamp for £30.",
    "2025-04-10.md": "---\ndate: 2025-04-10\n---\nWalter Rivera and I went swimming at the lido, 50 minutes, before his funeral.",
}


@pytest.fixture
def timeline(db, tmp_path):
    ingest_diary(db, tmp_path / "diary", NOTES)
    return db


def test_the_worker_stores_each_documents_events_and_reading_again_replaces_them(timeline):
    with timeline.connect() as conn:
        first = conn.execute("select count(*) from exo_private.events").fetchone()[0]
        doc = conn.execute("select id from exo_private.documents where path = '2025-03-02.md'").fetchone()[0]
        conn.execute("select pgmq.send('events', jsonb_build_object('document_id', %s::bigint))", (doc,))
    Worker(timeline.cfg, dbname=timeline.name, once=True, queues=("events",), poll_s=0.01).run()
    with timeline.connect() as conn:
        assert conn.execute("select count(*) from exo_private.events").fetchone()[0] == first
        assert conn.execute("select count(*) from pgmq.q_events").fetchone()[0] == 0  # every message archived


def test_exo_events_filters_and_withholds_deferred_sources_unless_bridged(timeline):
    with timeline.connect("exo_reader") as conn:
        swims = conn.execute("select day::text from exo.events(what => 'swimming')").fetchall()
        assert [d for (d,) in swims] == ["2025-03-02", "2025-03-09", "2025-04-02"]  # not Walter's
        bridged = conn.execute(
            "select count(*) from exo.events(what => 'swim', bridge => array['Walter Rivera'])"
        )
        assert bridged.fetchone()[0] == 4
        march = conn.execute(
            "select key, events, minutes from exo.event_counts(from_day => '2025-03-01', to_day => '2025-03-31')"
        ).fetchall()
        assert ("swim", 2, 75) in [(k, n, int(m or 0)) for k, n, m in march]
        earlier = conn.execute("select count(*) from exo.events(what => 'swim', as_of => '2025-03-05')")
        assert earlier.fetchone()[0] == 1
        with pytest.raises(Exception, match="group_by must be one of"):
            conn.execute("select * from exo.event_counts(group_by => 'colour')")


def test_a_word_finds_the_events_told_with_it_over_a_range_and_after_a_merge(timeline):
    march = "select day::text, activity from exo.events(what => %s, from_day => '2025-03-01', to_day => '2025-03-31')"
    with timeline.connect("exo_reader") as conn:
        assert conn.execute(march, ("ran",)).fetchall() == [("2025-03-20", "run")]
        assert conn.execute(march, ("swam",)).fetchall() == [("2025-03-02", "swim")]  # not "went swimming"
    with timeline.connect("exo_writer") as conn:
        conn.execute("select exo_private.merge_activities('run', 'jog')")
        # the words each activity was told with, kept as events are stored and corrected
        told = conn.execute("select form from exo_private.event_forms where activity = 'jog' order by 1")
        assert [f for (f,) in told] == ["ran", "run", "running"]
    with timeline.connect("exo_reader") as conn:
        assert conn.execute(march, ("ran",)).fetchall() == [("2025-03-20", "jog")]
        assert conn.execute(march, ("jog",)).fetchall() == [("2025-03-20", "jog")]


def test_aggregate_questions_are_answered_from_the_timeline(timeline):
    assert answer(packet(timeline, "How many times did I go swimming in March 2025?")).startswith(
        "Answer: 2 times"
    )
    assert "2025-04-02" in answer(packet(timeline, "When did I last go swimming?"))
    assert "2025-03-20" in answer(packet(timeline, "When did I last see Dr Hale?"))
    assert "2025-03-09" in answer(packet(timeline, "When did I last see Nadia?"))  # not the last "see"
    assert "£42.50 in total" in answer(packet(timeline, "How much did I spend in total?"))
    assert "135 minutes in total" in answer(packet(timeline, "How long did I spend swimming in total?"))


def test_a_question_of_which_over_named_days_lists_them_and_others_get_no_section(timeline):
    assert (
        answer(packet(timeline, "Where did I swim in March 2025?")) == "Answer: 2 events: Millbrook pool (1)"
    )
    assert "## Timeline" not in packet(timeline, "What did the plumber say in March 2025?")["text"]
    assert "## Timeline" not in packet(timeline, "Where did I swim in January 2025?")["text"]  # none then
    # a money word lists only the day's events that tell an amount
    paid = packet(timeline, "What did I pay for on 2 March 2025?")
    assert answer(paid).startswith("Answer: 1 event"), paid["text"]
    assert "teapot" in paid["text"].split("## Timeline\n", 1)[1].split("\n\n", 1)[0]


def test_a_count_never_includes_withheld_events_and_bridging_adds_them(timeline):
    assert answer(packet(timeline, "How many times did I go swimming in April 2025?")).startswith(
        "Answer: 1 time"
    )
    bridged = packet(timeline, "How many times did I go swimming in April 2025?", ["Walter Rivera"])
    assert answer(bridged).startswith("Answer: 2 times")


def test_what_the_timeline_cannot_read_gets_no_number(timeline):
    found = packet(timeline, "How many times did I go skydiving?")
    assert answer(found).startswith("Answer: none computed")
    assert "## Timeline" not in packet(timeline, "How much is my rent?")["text"]
    assert packet(timeline, "What did the doctor say about my cough?")["report"]["timeline"] is None


def test_a_chat_line_of_the_owners_is_dated_by_its_message(db, tmp_path):
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.set_owner('Robin Ashdown')")
    lines = [
        {"conversation_id": "c1", "sender": "Robin Ashdown", "sent_at": "2025-05-10T09:00:00+00:00",
         "text": "We watched Dune last night, so good.", "is_owner": True},
        {"conversation_id": "c1", "sender": "Iris", "sent_at": "2025-05-10T09:05:00+00:00",
         "text": "I watched it too!"},
    ]  # fmt: skip
    path = write(tmp_path, "chat.jsonl", "\n".join(json.dumps(x) for x in lines))
    with db.connect("exo_writer") as conn:
        import_chat(conn, path, "jsonl")
    Worker(db.cfg, dbname=db.name, once=True, queues=("events",), poll_s=0.01).run()
    with db.connect("exo_reader") as conn:
        got = conn.execute("select day::text, activity from exo.events()").fetchall()
    assert got == [("2025-05-09", "watch")]  # the owner's line only, "last night" from its time


def dated_notes_read(db, root, notes: dict[str, str]) -> None:
    """Write notes named by their day (frontmatter date from the name), ingest them and run the
    events queue."""
    for name, text in notes.items():
        write(root, name, f"---\ndate: {name[:10]}\n---\n{text}")
    pipeline.ingest(db.cfg, root, "personal", dbname=db.name)
    Worker(db.cfg, dbname=db.name, once=True, queues=("events",), poll_s=0.01).run()


def test_a_word_an_activity_is_named_by_counts_that_activity_only(db, tmp_path):
    notes = {
        "2025-03-02.md": "Had lunch with Ines at the Anchor.",
        "2025-03-09.md": "Day trip to Galway: a family lunch.",
        "2025-03-20.md": "Flew to Lisbon for a wedding.",
    }
    dated_notes_read(db, tmp_path / "diary", notes)
    found = packet(db, "How many times did I have lunch in March 2025?")
    # the lunch; not every trip (the Lisbon one), nor the one a lunch was what it was for
    assert answer(found).startswith("Answer: 1 time")
    assert (
        "Read as: count of lunch " in found["text"]
        and "Lisbon" not in found["text"].split("## Timeline")[1].split("\n\n")[0]
    )


def test_events_named_by_what_an_activity_counts_or_where_it_happens_are_that_activity(db, tmp_path):
    notes = {
        "2025-03-02.md": "Swam 30 lengths at Parkside baths, 40 minutes.",
        "2025-03-05.md": "Swam 26 lengths at Parkside baths, 35 minutes.",
        "2025-03-09.md": "Did 24 lengths at Parkside baths (an hour).",
        "2025-03-12.md": "Baths before work, 20 lengths at Kingsway baths, took 30 minutes.",
        "2025-03-13.md": "Aqua session: 16 lengths in 20 minutes.",
        "2025-03-15.md": "Ran 5 km along the canal.",
    }
    dated_notes_read(db, tmp_path / "diary", notes)
    swims = packet(db, "How many times did I go swimming in March 2025?")
    # lengths and baths are swims here, and what is mostly counted in lengths
    assert answer(swims).startswith("Answer: 5 times"), swims["text"]
    assert "Read as: count of aqua, bath, length, swim " in swims["text"]
    most = packet(db, "Which baths did I swim at most in March 2025?")
    assert answer(most).startswith("Answer: Parkside baths, 3 times"), most["text"]


def test_an_appointment_of_no_kind_said_counts_as_its_persons_or_the_nearest_kind(db, tmp_path, real_models):
    notes = {
        "2025-03-02.md": "Dentist appointment at 9:15 with Dr Ferreira: all fine.",
        "2025-03-05.md": "Appointment with Dr Iwu (optician) at 10:30, new lenses.",
        "2025-03-09.md": "Went to see Dr Brandt about a wisdom tooth; it comes out next month.",
        "2025-03-12.md": "Dr Ferreira had a look at my crown at 8:45, fine.",
        "2025-03-20.md": "Saw Dr Quinn about my blurry vision.",
        "2025-03-25.md": "Saw Dr Osei.",
    }
    with db.connect() as conn:
        use_embeddings(conn, real_models.embeddings.url)  # the nearest kind is read by MiniLM
    dated_notes_read(db, tmp_path / "diary", notes)
    dentist = packet(db, "How many times did I go to the dentist in March 2025?")
    # Dr Ferreira is the dentist of another appointment; the tooth is nearest the dentist in
    # meaning; the vision nearest the optician; nothing tells what Dr Osei is
    assert answer(dentist).startswith("Answer: 3 times"), dentist["text"]
    assert "and 2 appointments of no kind said, read as one" in dentist["text"]
    optician = packet(db, "How many times did I see the optician in March 2025?")
    assert answer(optician).startswith("Answer: 2 times"), optician["text"]
    assert "Saw Dr Quinn" in optician["text"] and "Dr Osei" not in optician["text"]


@pytest.fixture
def exo(timeline, monkeypatch):
    """`exo events ...` against the test's database: reads as the reader, corrections as the writer."""
    monkeypatch.setenv("EXO_READER_URL", timeline.url("exo_reader"))
    monkeypatch.setattr(output, "writer", lambda _cfg, _name: timeline.connect("exo_writer"))
    monkeypatch.setenv("COLUMNS", "300")

    def run(*args: str, ok: bool = True) -> str:
        result = CliRunner().invoke(main, ["events", *args], catch_exceptions=False)
        assert (result.exit_code == 0) == ok, result.output
        return result.output

    return run


def test_exo_events_lists_counts_and_corrections_survive_a_rebuild(timeline, exo):
    listed = json.loads(
        exo("list", "--what", "swim", "--from-day", "2025-03-01", "--to-day", "2025-03-31", "--json")
    )
    assert [e["day"] for e in listed] == ["2025-03-02", "2025-03-09"]
    counts = {
        r["key"]: r["events"] for r in json.loads(exo("counts", "--by", "month", "--what", "swim", "--json"))
    }
    assert counts == {"2025-03": 2, "2025-04": 1}
    assert "1 event(s) of run now count as jog" in exo("merge", "run", "jog")
    dropped = listed[0]["event_id"]
    assert "dropped swim on 2025-03-02" in exo("drop", str(dropped))
    assert "activity 'nap': no event has it" in exo("merge", "nap", "sleep", ok=False)
    assert "queued 5 document(s)" in exo("rebuild")
    Worker(timeline.cfg, dbname=timeline.name, once=True, queues=("events",), poll_s=0.01).run()
    after = {r["key"]: r["events"] for r in json.loads(exo("counts", "--json"))}
    assert after.get("jog") == 1 and "run" not in after  # the merge holds after the rebuild
    swims = json.loads(exo("list", "--what", "swim", "--json"))
    assert "2025-03-02" not in [e["day"] for e in swims]  # so does the drop


def test_a_calendar_like_note_is_an_event_of_its_attendees_and_place():
    (event,) = events.calendar_events(
        "Dentist appointment", {"attendees": ["Dr Okafor", "Robin"], "place": "Harbour Clinic"}, DAY, 7,
        frozenset({"robin"}),
    )  # fmt: skip
    assert (event["activity"], event["people"], event["place"], event["chunk_id"]) == (
        "dentist", ["Dr Okafor"], "Harbour Clinic", 7,
    )  # fmt: skip
    (planning,) = events.calendar_events("Quarterly planning", {"with": "Ann and Bob"}, DAY, 7)
    assert planning["people"] == ["Ann", "Bob"] and "meeting" in planning["forms"]
    assert events.calendar_events("Reading list", {"tags": ["books"]}, DAY, 7) == []  # no attendees, no place
    assert events.calendar_events("Standup", {"attendees": ["Ann"]}, None, 7) == []  # no day


def test_states_habits_and_bare_nouns_of_a_chat_are_no_events():
    chat = lambda text: [e.activity for e in events.text_events(text, DAY, note=False)]  # noqa: E731
    assert chat("I think they'll become capable of it.") == []  # a state of mind
    assert chat("I like to play for fun though.") == []  # present: a habit
    assert chat("I used to go more when I was little.") == []  # a habit of the past
    assert chat("Tech problems.") == [] and chat("16 minutes!") == []  # a thing named, an amount
    assert chat("Read this book!") == []  # a request, where a note's "Read 45 pages" is a diary's past
    assert chat("I ran a mile and wanted to die.") == ["run"]
    assert [e.activity for e in events.text_events("Read 45 pages of The Salt Orchard.", DAY)] == ["read"]


def test_frontmatter_tables_and_record_lines_tell_no_events():
    note = "---\ndate: 2025-06-24\ntitle: Tuesday\n---\n| Rent | 610 |\n**Blood type:** O negative\nSwam 30 lengths.\n"
    assert [e["activity"] for e in read(note)] == ["swim"]
    assert len(events.prose(note)) == len(note)  # blanked, so offsets stay the note's


# -- deference carried on the event (issue 31: no reading joins each event to its source) -------


def test_an_event_takes_its_sources_marks_as_subjects_are_deferred_and_released(timeline):
    # Walter's swim (his name beside "funeral") was withheld when stored; released and deferred
    # again after, its event follows its chunk each time
    april = "How many times did I go swimming in April 2025?"
    walter = "select count(*) from exo.events(with_person => 'Walter')"
    with timeline.connect("exo_writer") as conn:
        conn.execute("select exo_private.undefer_subject('Walter Rivera')")
    with timeline.connect("exo_reader") as conn:
        assert conn.execute(walter).fetchone()[0] == 1
    assert answer(packet(timeline, april)).startswith("Answer: 2 times")
    with timeline.connect("exo_writer") as conn:
        conn.execute("select exo_private.defer_subject('Walter Rivera')")
    with timeline.connect("exo_reader") as conn:
        assert conn.execute(walter).fetchone()[0] == 0
    assert answer(packet(timeline, april)).startswith("Answer: 1 time")
    with timeline.connect() as conn:
        stale = conn.execute(
            "select count(*) from exo_private.events e join exo_private.chunks c"
            " on c.workspace = e.workspace and c.id = e.chunk_id"
            " where e.charged_subjects is distinct from c.charged_subjects"
        )
        assert stale.fetchone()[0] == 0


def test_the_events_of_a_source_gone_are_withheld_until_their_document_is_read_again(timeline, tmp_path):
    swims = "select day::text from exo.events(what => 'swim', bridge => array['Walter Rivera'])"
    write(tmp_path / "diary", "2025-03-02.md", NOTES["2025-03-02.md"] + "\n\nBought bread.")
    pipeline.ingest(timeline.cfg, tmp_path / "diary", "personal", dbname=timeline.name)  # new chunks
    with timeline.connect("exo_reader") as conn:
        assert "2025-03-02" not in [d for (d,) in conn.execute(swims).fetchall()]
    with timeline.connect("exo_writer") as conn:  # the Timeline section's reading too
        assert not conn.execute(
            "select exo_private.timeline_answer(null, null, array['swim'], '2025-03-01', '2025-03-31', null,"
            " null, null, exo_private.released_keys(array['Walter Rivera']), null, 8, null, false)"
            " -> 'listed' @> '[{\"day\": \"2025-03-02\"}]'"
        ).fetchone()[0]
    Worker(timeline.cfg, dbname=timeline.name, once=True, queues=("events",), poll_s=0.01).run()
    with timeline.connect("exo_reader") as conn:
        assert "2025-03-02" in [d for (d,) in conn.execute(swims).fetchall()]


def test_a_chat_line_s_event_takes_its_messages_marks(db, tmp_path):
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.set_owner('Robin Ashdown')")
    lines = [
        {"conversation_id": "c1", "sender": "Robin Ashdown", "sent_at": "2025-05-10T09:00:00+00:00",
         "text": "We watched Dune with Iris Morgan last night, before the funeral.", "is_owner": True},
        {"conversation_id": "c1", "sender": "Iris", "sent_at": "2025-05-10T09:05:00+00:00", "text": "Loved it"},
    ]  # fmt: skip
    path = write(tmp_path, "chat.jsonl", "\n".join(json.dumps(x) for x in lines))
    with db.connect("exo_writer") as conn:
        import_chat(conn, path, "jsonl")
    Worker(db.cfg, dbname=db.name, once=True, queues=("events",), poll_s=0.01).run()
    watched = "select count(*) from exo.events(what => 'watch', bridge => %s)"
    with db.connect("exo_reader") as conn:
        assert conn.execute(watched, ([],)).fetchone()[0] == 1
    with db.connect("exo_writer") as conn:
        conn.execute("select exo_private.defer_subject('Iris Morgan')")
        held = conn.execute("select charged_subjects from exo_private.events where message_id is not null")
        assert held.fetchone()[0] == ["Iris Morgan"]
    with db.connect("exo_reader") as conn:
        assert conn.execute(watched, ([],)).fetchone()[0] == 0
        assert conn.execute(watched, (["Iris Morgan"],)).fetchone()[0] == 1
