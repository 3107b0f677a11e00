"""plpy/changes.py as plain Python: passages of one packet that state different values of one thing.

exo_private.build_packet runs it on the packet's evidence (the SQL around it is tested in
tests/test_search.py); bench/chat_updates measures it.
"""

import changes
import pytest
import search

SETTINGS = {"packet.min_relative_score": 0.5, "packet.max_chunks": 5}


def chat(chunk_id, conversation, *lines):
    """A chat window's candidate: lines "YYYY-MM-DD HH:MM Sender: text"."""
    return {
        "chunk_id": chunk_id,
        "document_id": 100 + chunk_id,
        "body": "\n".join(lines),
        "chat": {"conversation_id": conversation, "title": conversation, "similarity": None},
        "written_at": lines[0][:10],
        "score": 1.0,
        "workspace": "personal",
        "path": f"chat/{conversation}",
        "band": "current",
    }


def note(chunk_id, day, body):
    return {"chunk_id": chunk_id, "document_id": chunk_id, "body": body, "chat": None, "written_at": day,
            "score": 1.0, "workspace": "personal", "path": f"n{chunk_id}.md", "band": "current"}  # fmt: skip


@pytest.mark.parametrize(
    ("question", "now"),
    [
        ("Who is my manager?", True),
        ("What's our checkout latency budget?", True),
        ("What car do I drive?", True),
        ("Where does Anna live these days?", True),
        ("Who leads the payments team?", True),  # a verb in -s
        ("Who was my manager?", False),  # about a time before
        ("Which mountain did John climb?", False),
        ("Tell me about Perthshire", False),  # no verb of the present
    ],
)
def test_a_question_asks_what_holds_now_by_its_tense(question, now):
    assert changes.asks_now(question, {}) is now


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Where does Priya live now?", "name"),
        ("Who recommended The Quiet Harbour?", "name"),
        ("What is the name of Jonas's cat?", "name"),
        ("When is Ana's sister's wedding?", "time"),
        ("Which day is the market?", "time"),
        ("How long have you been skiing?", "quantity"),
        ("How much is the rent?", "quantity"),
        ("Tell me about Perthshire", None),
        ("What did Ana say about the book?", None),
    ],
)
def test_a_question_asks_for_a_kind_of_value_by_its_question_words(question, kind):
    assert changes.asked_kind(question) == kind


def test_a_line_answers_the_kind_asked_by_a_value_the_question_does_not_write():
    lines = ["Officially a Porto resident now.", "Lol yes anyway.", "Priya says hi!", "It's on 21 November!"]
    assert changes.states_asked("Where does Priya live now?", lines) == [True, False, False, False]
    assert changes.states_asked("When is Priya's race?", lines) == [False, False, False, True]
    assert changes.states_asked("How long is the race?", ["About 21 km.", "Soon!"]) == [True, False]
    moved = ["Hmm. Only 10 minutes left of this meeting.", "Big news: I moved to Leipzig today!"]
    assert changes.states_asked("Where does Tomas live now?", moved) == [False, True]
    assert changes.states_asked("Tell me about Priya", lines) is None


def test_a_question_naming_a_time_compares_only_what_was_said_by_its_end():
    """ "When is the report due in Q3?" names a quarter and asks in the present: the later of two
    lines said by then is put first and marked; a line said after the time named tells nothing
    of then, and is neither put first nor marked."""
    first = chat(1, "c1", "2026-08-02 09:00 Sam: The Q3 report is due on 15 August.")
    then = chat(2, "c2", "2026-08-20 10:00 Sam: The Q3 report deadline was pushed back to 1 September.")
    after = chat(3, "c3", "2026-10-05 10:00 Sam: The Q3 report deadline is now 12 October.")
    quarter = {
        "temporal": {"signals": [{"text": "in Q3"}], "span": {"first": "2026-07-01", "last": "2026-09-30"}}
    }
    asked = "When is the report due in Q3?"
    out = changes.order_changes(asked, [first, then], dict(quarter))
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(2, "later"), (1, "earlier")]
    out = changes.order_changes(asked, [first, after], dict(quarter))
    assert [(c["chunk_id"], c.get("change")) for c in out] == [(1, None), (3, None)]
    out = changes.order_changes(asked, [first, after], {})  # no time named
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(3, "later"), (1, "earlier")]
    # "the Q3 report" names a report, not a time: the later line is put first
    named = {"temporal": {"signals": [{"text": "Q3"}], "span": {"first": "2026-07-01", "last": "2026-09-30"}}}
    out = changes.order_changes("When is the Q3 report due?", [first, after], named)
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(3, "later"), (1, "earlier")]
    assert changes.time_named("What time is my meeting on Friday?", {"temporal": {
        "signals": [{"text": "on Friday"}], "span": {"last": "2026-12-04"}}}) == "2026-12-04"  # fmt: skip


def test_a_window_of_someone_elses_conversation_is_no_change_of_what_is_asked():
    """Aiden's workplace and Gus's, said weeks apart, differ; for "Where does Aiden work now?"
    Gus's window (search.other_conversations flags it) tells what holds for Gus, not that Aiden's
    changed."""
    aiden = chat(1, "c1", "2026-10-14 13:29 Sam: Aiden works at Lumen Works, his first week went fine.")
    gus = chat(2, "c2", "2026-12-03 18:21 Sam: Aiden works at Motion Clinic now, his first week went fine.")
    asked = "Where does Aiden work now?"
    out = changes.order_changes(asked, [aiden, gus], {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(2, "later"), (1, "earlier")]
    out = changes.order_changes(asked, [aiden, dict(gus, other_conversation=True)], {})
    assert [(c["chunk_id"], c.get("change")) for c in out] == [(1, None), (2, None)]
    # nor does a newer one below the packet's cut join it
    out = changes.order_changes(asked, [aiden], {}, pool=[dict(gus, other_conversation=True)])
    assert [(c["chunk_id"], c.get("change")) for c in out] == [(1, None)]


def test_lines_in_the_first_person_by_two_senders_tell_of_two_people():
    """ "Where do I live now?": the owner's "I live in Leeds" and a friend's later "I moved to
    York" in the same conversation are two people's homes, not one that changed; the owner's own
    later line is a change, as is the friend's line of the owner's home in the third person."""
    mine = chat(1, "ana", "2026-03-02 09:00 Sam: I live in Leeds, near the station.")
    hers = chat(2, "ana", "2026-05-14 18:20 Ana: I moved to York last week, and I live near the Minster.")
    asked = "Where do I live now?"
    out = changes.order_changes(asked, [mine, hers], {})
    assert [(c["chunk_id"], c.get("change")) for c in out] == [(1, None), (2, None)]
    # nor, in one conversation of two people, is the other's job the one asked about, changed
    hers = chat(7, "cm", "2023-05-02 10:00 Caroline: I work at the Brookfield library these days.")
    other = chat(8, "cm", "2023-08-14 18:20 Melanie: I work at Lakeside School now, teaching art.")
    out = changes.order_changes("Where does Caroline work now?", [hers, other], {})
    assert [(c["chunk_id"], c.get("change")) for c in out] == [(7, None), (8, None)]
    moved = chat(3, "ana", "2026-06-01 10:00 Sam: i moved to York, i live near the Minster now.")
    out = changes.order_changes(asked, [mine, moved], {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(3, "later"), (1, "earlier")]
    told = chat(4, "ana", "2026-06-01 10:00 Ana: Sam lives in York now, near the Minster.")
    out = changes.order_changes(asked, [mine, told], {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(4, "later"), (1, "earlier")]
    # nor does a friend's line replace the owner's value by name
    goal = chat(5, "ana", "2026-03-02 09:00 Sam: I'm training for 10 km this spring.")
    words = ["running", "goal"]
    for sender, replaces in (("Ana", False), ("Sam", True)):
        newer = chat(6, "ana", f"2026-05-14 18:20 {sender}: I'm going for 21 km instead of 10 km.")
        assert (
            changes.replaces(
                changes.stated(newer, words, set(words)), changes.stated(goal, words, set(words))
            )
            is replaces
        )


def test_a_window_that_corrects_itself_shows_both_lines_and_says_which_is_later():
    """A correction a minute later in the same conversation, one window: its excerpt holds the
    first statement and the correction (not the first alone, the line most like the question),
    and its citation says the later line updates the earlier."""
    window = chat(
        1, "c1",
        "2026-09-07 20:57 Sam: My meeting with the design team is at 2pm on Friday.",
        "2026-09-07 20:57 Assistant: Noted, thanks for telling me. I will put it in your calendar.",
        "2026-09-07 20:58 Sam: Correction: the design team meeting moved to 3pm on Friday.",
        "2026-09-07 20:58 Assistant: Noted, thanks for telling me. The calendar is updated now.",
    )  # fmt: skip
    question = "What time is my meeting with the design team?"
    words = search.content_words(question)
    alone = search.chunk_excerpt(window, words, 300, 120)
    assert "2pm" in alone and "3pm" not in alone  # the line most like the question, and its reply
    report = {}
    (out,) = changes.order_changes(question, [window], report)
    shown = search.chunk_excerpt(out, words, 300, 120)
    assert "2pm" in shown and "3pm" in shown
    assert (
        search.change_note(out, {1: 1})
        == " (later line, 2026-09-07 20:58: updates the line of 2026-09-07 20:57)"
    )
    assert report["changes"] == [{"kind": "update", "chunks": [1], "within": True}]
    # the newer line is the answering one: the earlier is shown above it
    window["chat"]["similarity"] = [0.2, 0.0, 0.9, 0.0]
    (out,) = changes.order_changes(question, [window], {})
    assert out["also_at"] == 0 and "2pm" in search.chunk_excerpt(out, words, 300, 120)
    # a later line that tells the same value and says no change has nothing to mark
    again = "Remind me: the design team meeting is at 2pm on Friday."
    same = dict(window, body=window["body"].replace("Correction: the design team meeting moved to 3pm on Friday.", again),
                chat=dict(window["chat"], similarity=None))  # fmt: skip
    assert "change" not in changes.order_changes(question, [same], {})[0]


def test_a_later_line_of_the_sender_that_says_it_changes_what_is_asked_is_shown_and_marked():
    """No value to compare ("pending", "shipped"; an order's number the question writes is no
    value): a later message of the same sender that says it changes something ("Update:") and
    holds the question's words is the window's newer statement."""
    window = chat(
        1, "c1",
        "2026-09-09 07:58 Sam: Order ORTAND-88 is currently pending.",
        "2026-09-09 07:59 Assistant: Noted, thanks for telling me.",
        "2026-09-09 07:59 Sam: Update: order ORTAND-88 has shipped.",
        "2026-09-09 08:00 Assistant: Noted, thanks for telling me.",
    )  # fmt: skip
    other = chat(
        2, "c2", "2026-09-08 10:58 Sam: The Q3 report is due on 15 August, the P2 ticket on 1 September."
    )
    question = "What is the status of order ORTAND-88?"
    assert changes.statement("Order ORTAND-88 is currently pending.", {"ortand", "88"})[0] == set()
    out = changes.order_changes(question, [window, other], {})
    assert out[0]["change"]["within"] == "2026-09-09 07:58" and "change" not in out[1]
    assert "shipped" in search.chunk_excerpt(out[0], search.content_words(question), 300, 120)
    # another sender's line says nothing of what this one said
    theirs = dict(window, body=window["body"].replace("07:59 Sam: Update", "07:59 Ana: Update"))
    assert "change" not in changes.order_changes(question, [theirs], {})[0]
    # a month later, in another window of the conversation: put first, and said to update it
    pending = chat(3, "c1", "2026-09-09 07:58 Sam: Order ORTAND-88 is currently pending.")
    shipped = chat(4, "c1", "2026-10-14 08:30 Sam: Update: order ORTAND-88 has shipped.")
    out = changes.order_changes(question, [pending, shipped], {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(4, "later"), (3, "earlier")]
    assert search.change_note(out[0], {4: 1, 3: 2}) == " (later, 2026-10-14: updates [2])"
    # another conversation's line, or one that says no change, is no newer value of it
    elsewhere = dict(shipped, chat=dict(shipped["chat"], conversation_id="c9"))
    unchanged = dict(shipped, body="2026-10-14 08:30 Sam: Order ORTAND-88 is with the courier.")
    for later in (elsewhere, unchanged):
        assert [c.get("change") for c in changes.order_changes(question, [pending, later], {})] == [
            None,
            None,
        ]


def test_a_conversations_title_holds_what_its_lines_are_about():
    """ "I'm vegetarian" and "Update: I started eating fish again, so pescatarian is fine now."
    tell no value and hold no word of "What are my current dietary restrictions?": their
    conversation's title does (BM25 reads it as every window's: chunks.document_title), so the
    newer says it changes what is asked, and the two are ordered and marked."""
    question = "What are my current dietary restrictions?"
    older = chat(1, "c1", "2026-09-08 08:58 Alex: I'm vegetarian, please don't suggest meat dishes.")
    newer = chat(
        2, "c1", "2026-10-13 08:58 Alex: Update: I started eating fish again, so pescatarian is fine now."
    )
    titled = [dict(c, document_title="dietary restriction") for c in (older, newer)]
    out = changes.order_changes(question, titled, {})
    assert [(c["chunk_id"], c["change"]["kind"], c["change"]["update"]) for c in out] == [
        (2, "later", True),
        (1, "earlier", False),
    ]
    # untitled, the lines say nothing of what is asked
    assert [c.get("change") for c in changes.order_changes(question, [older, newer], {})] == [None, None]
    # one window holding both lines shows both, the newer marked
    window = chat(3, "c1", older["body"], "2026-09-08 08:59 Alex: Update: I started eating fish again, so "
                  "pescatarian is fine now.")  # fmt: skip
    out = changes.order_changes(question, [dict(window, document_title="dietary restriction")], {})
    assert out[0]["change"]["within"] == "2026-09-08 08:58"
    # and where the newer is the message most like the question, the one the excerpt shows
    nearest = dict(
        window, chat=dict(window["chat"], similarity=[0.2, 0.4]), document_title="dietary restriction"
    )
    out = changes.order_changes(question, [nearest], {})
    assert out[0]["change"]["within"] == "2026-09-08 08:58" and out[0]["also_at"] == 0
    # a greeting before it says nothing that changed
    greeting = dict(
        nearest, body=nearest["body"].replace("I'm vegetarian, please don't suggest meat dishes.", "Hi!")
    )
    assert "change" not in changes.order_changes(question, [greeting], {})[0]


def test_a_name_that_opens_a_sentence_as_the_subject_of_is_is_a_value():
    """ "Priya is the lead" then "Sam is now the lead": the one capitalised word before "is" is a
    name; a word the question writes is not ("Rent is now £1,210" for a question about rent)."""
    assert changes.statement("Priya is the lead on the payments team.", set())[0] == {("name", "Priya")}
    assert changes.statement("Leadership on the team changed. Sam is now the lead.", set())[0] == {
        ("name", "Sam")
    }
    assert changes.statement("Rent is now £1,210.", {"rent"})[0] == {("money", "£1,210")}
    first = chat(1, "c1", "2026-09-09 00:58 Alex: Priya is the lead on the payments team.")
    then = chat(
        2, "c1", "2026-10-14 00:58 Alex: Leadership on the payments team changed. Sam is now the lead."
    )
    out = changes.order_changes("Who leads the payments team?", [first, then], {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(2, "later"), (1, "earlier")]


def test_a_line_tells_its_numbers_and_names_not_its_questions_nor_its_opening_word():
    values, about = changes.statement("The landlord put the rent up to £1,210.", {"rent"})
    assert values == {("money", "£1,210")} and {"landlord", "rent"} <= about
    values, _ = changes.statement("Living in Leeds, which broadband is best for Netflix?", set())
    assert values == {("name", "Leeds")}
    values, _ = changes.statement("What should I bring to a 1:1 with my manager?", set())
    assert values == set()
    values, _ = changes.statement("Sold the old car; I drive a Renault Zoe now.", set())
    assert values == {("name", "Renault Zoe")}
    # a quantity's unit is no name ("GB"), nor a day's month, nor a currency's code
    values, _ = changes.statement("I get 20 GB a month on my phone.", set())
    assert values == {("number gb", "20")}
    values, _ = changes.statement("The offsite moved to 2 June.", set())
    assert values == {("date", "2 june")}
    values, _ = changes.statement("On-call allowance EUR 2,400.00, up from €2,000.", set())
    assert values == {("money", "€2,400"), ("money", "€2,000")}
    # a short word with a dot ends a sentence unless it is a title's abbreviation: "Hmm. Only ..."
    # names nothing, as "Yes. Sounds good." does not; "Dr. Okafor" and "St. Ives" are names
    values, _ = changes.statement("Hmm. Only 10 minutes left of this meeting, I can do it.", set())
    assert values == {("number", "10")}
    assert changes.statement("Yes. Sounds good. Ok. Maybe later.", set())[0] == set()
    values, _ = changes.statement("I saw Dr. Okafor at St. Ives.", set())
    assert values == {("name dr.", "Dr. Okafor"), ("name st.", "St. Ives")}


def test_an_update_is_put_first_and_both_say_which_is_later():
    old = chat(1, "c1", "2025-03-02 09:00 Sam: My manager is Priya Nair, any tips for a 1:1?")
    other = note(2, "2025-06-01", "Notes on the garden: the roses need pruning in March.")
    new = chat(3, "c2", "2025-10-14 18:20 Sam: My new manager is Tomasz Wolski.")
    report = {}
    out = changes.order_changes("Who is my manager?", [old, other, new], report)
    assert [c["chunk_id"] for c in out] == [3, 2, 1]  # newest first, in the places they held
    assert out[0]["change"] == {"kind": "later", "others": [1], "day": "2025-10-14", "update": True}
    assert out[2]["change"] == {"kind": "earlier", "others": [3], "day": "2025-03-02", "update": False}
    assert "change" not in out[1]
    assert report["changes"] == [{"kind": "update", "chunks": [3, 1]}]
    numbers = {c["chunk_id"]: n for n, c in enumerate(out, 1)}
    assert search.change_note(out[0], numbers) == " (later, 2025-10-14: updates [3])"
    assert search.change_note(out[2], numbers) == " (earlier, 2025-03-02; superseded by [1]?)"


def test_two_sources_that_differ_on_one_day_disagree_and_neither_is_put_first():
    a = chat(1, "ana", "2026-07-23 12:01 Ana: The cabin deposit is £400, paid by Friday.")
    b = chat(2, "ben", "2026-07-23 20:12 Ben: The cabin deposit is £450, paid by Friday.")
    report = {}
    out = changes.order_changes("How much is the deposit for the cabin?", [a, b], report)
    assert [c["chunk_id"] for c in out] == [1, 2]
    assert [c["change"]["kind"] for c in out] == ["disagrees", "disagrees"]
    assert search.change_note(out[0], {1: 1, 2: 2}) == " (disagrees with [2], the same day)"
    assert report["changes"] == [{"kind": "disagreement", "chunks": [2, 1]}]


def test_one_conversation_correcting_itself_on_one_day_is_an_update():
    first = chat(1, "c", "2026-07-23 12:01 Ana: Standup is at 9:30 tomorrow.")
    then = chat(2, "c", "2026-07-23 12:40 Ana: Actually standup moved to 10:15.")
    out = changes.order_changes("When is standup?", [first, then], {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(2, "later"), (1, "earlier")]


def test_values_of_a_specific_kind_tie_lines_that_share_no_word():
    """A weekday, a quantity in one unit, a person by a title: a line that tells nothing else is
    about the same thing as one that holds the question's word ("gym"); a group is marked when
    one of its lines holds a word of the question."""
    values, _ = changes.statement("I'm training for 10 km and 5 kg lighter, as Dr. Okafor says.", set())
    assert values == {("number km", "10"), ("number kg", "5"), ("name dr.", "Dr. Okafor")}
    first = chat(1, "g0", "2025-08-06 18:00 Sam: Gym day is Tuesdays for me.")
    then = chat(2, "g1", "2026-01-03 16:34 Sam: Class times changed, so I train on Thursdays.")
    report = {}
    out = changes.order_changes("Which day do I go to the gym?", [first, then], report)
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(2, "later"), (1, "earlier")]
    # a line that tells more than a day is no other day of the question's thing
    dinner = chat(3, "a", "2026-09-28 17:49 Ana: Dinner at the Parkers' is on Saturday at 7.")
    flight = chat(4, "b", "2026-04-23 20:52 Ana: Karl's flight lands at 6:40 on Sunday.")
    assert changes.order_changes("When does Karl's flight land?", [dinner, flight], {}) == [dinner, flight]
    # a group none of whose lines holds a word of the question is not marked
    runs = [chat(5, "r0", "2025-10-02 18:07 Sam: Upgraded the plan from 10 km to 21 km."),
            chat(6, "r1", "2026-10-04 18:11 Sam: Upgraded the plan from 21 km to 42 km.")]  # fmt: skip
    assert changes.order_changes("What is my salary?", runs, {}) == runs


def test_a_quantity_is_about_what_its_unit_measures():
    """ "42 km" answers a question about distance, "50 GB" one about data: a group of them is
    about the question though neither line holds its words."""
    _, about = changes.statement("New target: 42 km.", set())
    assert {"distanc", "length"} <= about
    runs = [chat(1, "r0", "2025-11-03 12:42 Sam: New target: 21 km."),
            chat(2, "r1", "2026-03-28 11:33 Sam: New target: 42 km.")]  # fmt: skip
    out = changes.order_changes("What distance am I training for?", runs, {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(2, "later"), (1, "earlier")]
    # a weight is no distance
    assert changes.order_changes("What weight am I training for?", runs, {}) == runs


def test_a_newer_line_that_says_it_changes_to_one_value_updates_a_line_of_its_kind():
    """ "We moved to York last month." shares no word with "Living in Leeds, ...", and a bare
    name is too common a kind to tie lines by; a newer line that says it changes and tells one
    value is about the other's value of that kind. Naming two values, it would share the old."""
    old = chat(1, "c0", "2025-09-25 18:12 Sam: Living in Leeds, which broadband is best?")
    new = chat(2, "c1", "2026-02-18 08:30 Sam: We moved to York last month.")
    out = changes.order_changes("Which city do I live in?", [new, old], {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(2, "later"), (1, "earlier")]
    # an older line that says it changes updates nothing newer
    older = chat(2, "c1", "2025-02-18 08:30 Sam: We moved to York last month.")
    assert changes.order_changes("Which city do I live in?", [older, old], {}) == [older, old]
    # a line that names another thing as changed ("New address") changes no manager
    boss = chat(5, "m1", "2025-09-13 17:30 Sam: I report to Tomasz Wolski now after the reorg.")
    address = chat(6, "c1", "2025-10-29 09:46 Sam: New address is in York, can you update my letter?")
    assert changes.order_changes("Who do I report to?", [address, boss], {}) == [address, boss]
    # a change to two values, neither the other line's, is about something else
    club = chat(3, "b1", "2025-12-31 21:43 Sam: Book club is at the Lantern instead of Hollis Café.")
    offsite = chat(4, "o0", "2025-09-17 08:43 Sam: The team offsite is on 12 May at Juniper Hall.")
    assert changes.order_changes("Where is the team offsite?", [club, offsite], {}) == [club, offsite]


def test_a_newer_line_that_replaces_the_older_value_by_name_is_an_update_though_neither_holds_the_question():
    """ "instead of 10 km" names the value it replaces: the search chose both lines for the
    question, so the pair is marked though neither says "running" or "goal"."""
    old = chat(1, "r0", "2025-10-11 08:56 Sam: I'm training for 10 km; what pace?")
    new = chat(2, "r1", "2025-12-31 14:35 Sam: Going for 21 km instead of 10 km.")
    out = changes.order_changes("What is my running goal?", [old, new], {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(2, "later"), (1, "earlier")]
    # a packet whose other lines tell values of what is asked: the pair is about something else
    cabin = [chat(3, "ana", "2026-07-23 12:01 Ana: The cabin deposit is £400, paid by Friday."),
             chat(4, "rent", "2025-06-17 10:08 Sam: I pay £1,150 in rent every month."),
             chat(5, "rent", "2025-10-14 08:03 Sam: I'm paying £1,210 rent instead of £1,150.")]  # fmt: skip
    assert changes.order_changes("How much is the deposit for the cabin?", cabin, {}) == cabin
    # the older line naming both values replaces nothing newer
    before = chat(2, "r1", "2025-09-30 14:35 Sam: Going for 21 km instead of 10 km.")
    assert changes.order_changes("What is my running goal?", [old, before], {}) == [old, before]


def test_a_newer_line_below_the_cut_that_replaces_a_cited_value_joins_only_where_nothing_cited_answers():
    old = chat(1, "r0", "2025-10-11 08:56 Sam: I'm training for 10 km; what pace?")
    chatter = chat(2, "g0", "2025-11-30 07:07 Sam: Is stretching before lifting useful?")
    new = chat(3, "r1", "2026-01-01 14:35 Sam: Going for 21 km instead of 10 km.")
    out = changes.order_changes("What is my running goal?", [chatter, old], {}, [chatter, old, new])
    assert [(c["chunk_id"], (c.get("change") or {}).get("kind")) for c in out] == [
        (3, "later"),
        (1, "earlier"),
    ]
    # a cited line states a value with a word of the question: a replacement of another cited
    # line's value ("50 GB instead" of "20 GB a month") is no change of what is asked
    rent = chat(4, "rent", "2025-06-17 10:08 Sam: My rent is £1,150 a month, can you help me budget?")
    phone = chat(5, "p0", "2025-09-15 16:32 Sam: I get 20 GB on my phone.")
    plan = chat(6, "p1", "2026-01-13 20:07 Sam: Phone plan is 50 GB instead of 20 GB.")
    asked = "What do I pay in rent each month?"
    assert changes.order_changes(asked, [rent, phone], {}, [rent, phone, plan]) == [rent, phone]
    alone = changes.order_changes(asked, [chatter, phone], {}, [chatter, phone, plan])
    assert [c["chunk_id"] for c in alone] == [6, 5]


def test_a_newer_line_below_the_cut_never_takes_the_place_of_a_cited_newer_value():
    """The packet cites the first value and the newest, which writes no word of the question; the
    middle one, below the cut, joined in the newest's place and the packet said 21 km was the goal."""
    first = chat(1, "r0", "2025-06-18 20:32 Sam: Goal for the spring: run 10 km without stopping.")
    chatter = chat(2, "g0", "2026-07-20 11:48 Sam: Is stretching before lifting useful?")
    newest = chat(3, "r2", "2026-01-19 12:23 Sam: I'm now training for 42 km.")
    middle = chat(4, "r1", "2025-12-08 14:02 Sam: I'm now training for 21 km.")
    out = changes.order_changes(
        "What is my running goal?", [first, chatter, newest], {}, [first, chatter, newest, middle]
    )
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [
        (3, "later"),
        (4, "earlier"),
        (1, "earlier"),
    ]


@pytest.mark.parametrize("now", ["these days", "nowadays", "currently"])
def test_a_line_of_the_present_updates_an_older_value(now):
    old = chat(1, "c0", "2025-09-29 16:04 Sam: I drive a Volkswagen Golf; when is its first service due?")
    new = chat(2, "c1", f"2026-01-14 09:42 Sam: My car is {now} a Renault Zoe.")
    out = changes.order_changes("What car do I drive?", [old, new], {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(2, "later"), (1, "earlier")]
    assert out[0]["change"]["update"] is True


def test_a_newer_statement_below_the_cut_takes_the_place_of_chatter():
    old = chat(1, "p0", "2025-08-03 17:02 Sam: My phone plan has 20 GB of data; is that enough?")
    chatter = chat(2, "p1", "2026-10-11 11:45 Sam: How do I check data usage on Android?")
    newer = chat(3, "p2", "2026-03-10 09:00 Sam: I switched to a 50 GB plan.")
    unrelated = chat(4, "p3", "2026-04-01 09:00 Sam: The gym is 40 minutes from the plan office.")
    report = {}
    out = changes.order_changes(
        "How much data does my phone plan have?", [old, chatter], report, [old, chatter, unrelated, newer]
    )
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(3, "later"), (1, "earlier")]
    # nothing newer in the pool, or a question about the past: the packet's own choice stands
    assert changes.order_changes(
        "How much data does my phone plan have?", [old, chatter], {}, [unrelated]
    ) == [old, chatter]
    assert changes.order_changes("How much data did my phone plan have?", [old, chatter], {}, [newer]) == [
        old,
        chatter,
    ]


@pytest.mark.parametrize(
    ("question", "bodies"),
    [
        # the same value said twice is no change
        ("What is my rent?", ["My rent is £1,150.", "Rent is still £1,150, paid on the 1st."]),
        # different values of different things: no word of the question in common
        ("What is my rent?", ["My rent is £1,150.", "The gym costs £40 a month."]),
        # a word of the question ("budget") in a clause that tells no value of it
        (
            "What's our checkout latency budget?",
            [
                "My rent is £1,150 a month, can you help me budget around it?",
                "The landlord put the rent up to £1,210.",
                "My rent is now £1,275, so the budget needs redoing.",
            ],
        ),
        # a bare count both tell (a year) ties nothing
        (
            "How much is my rent?",
            ["- 2025-07: rent €1,210 a month", "# Atlas migration sync, Wednesday 12 March 2025"],
        ),
        # a question about the past: the earlier value may be the answer
        ("What was my rent?", ["My rent is £1,150.", "My rent is now £1,210."]),
        # lines sharing a word ("on-call") with values elsewhere in them, not said of it
        (
            "Who is on call for the database?",
            [
                "Employment (Northwind Labs)\nSalary EUR 81,000.00; on-call allowance EUR 2,400.00; bonus",
                "Subject: New on-call rotation from Monday 2 December",
                "We have one platform now, the on-call rota is quiet, and Iris and I write runbooks on Fridays.",
            ],
        ),
        # the question's word as another part of speech: a verb asked, a noun told ("the closing
        # report" tells nothing of whom I report to), with names and a quote's first word beside it
        (
            "Who do I report to?",
            [
                "3. switch off db-prod-03 and write the Atlas closing report",
                'I wrote the closing report in February and Tomas forwarded it with the subject line "Read this".',
            ],
        ),
        # one person named beside others, no change said: the same value, not another
        (
            "Who is my manager?",
            [
                "- **Manager:** Tomas Okafor",
                "- **Responders:** Sam Rivera (primary on-call), Iris Calder (secondary), Tomas Okafor (incident manager)",
                "Attendees: Sam Rivera (Atlas lead), Iris Calder (DBA), Tomas Okafor (engineering manager).",
            ],
        ),
        # a sentence's first word is no part of a name: "Okafor" of it is "Tomas Okafor"
        (
            "Who is my manager?",
            ["My manager is Tomas Okafor.", "Tomas Okafor is my manager and incident lead."],
        ),
        # a transcript's time into the recording and its speaker are no values of the line
        (
            "Who is my manager?",
            [
                "[00:02:09] Tomas Okafor: Write that down as a risk, manager.",
                "[00:02:54] Iris Calder: One more, manager.",
            ],
        ),
        # a series of short phrases: each item tells of itself, not of the names of the others
        (
            "How much is my rent?",
            [
                "| Rent, 27 Alder Row | €1,210 | since July 2025 |",
                "The rent, the car, Pixel's insurance, the HOUSE pot.",
            ],
        ),
        # one rent told beside different years: a bare count is no other value where both tell money
        (
            "How much is my rent?",
            ["- 2025-07: rent €1,210 a month", "- 2025-26: rent up to €1,210 (no tax effect)"],
        ),
        # a name the question writes is whom it asks about: what else a line tells of Pixel is no
        # value of where she sleeps
        (
            "Where does Pixel sleep?",
            [
                "- **Dog:** Pixel, terrier mix, adopted 13 March 2021 from Larkhaven Animal Shelter",
                "Walked the clifftop with Ruth this morning, the long way round from Cove End to the point "
                "and back, Pixel ranging ahead.",
            ],
        ),
    ],
)
def test_no_change_is_said_where_none_is(question, bodies):
    chosen = [note(i, f"2025-0{i}-01", body) for i, body in enumerate(bodies, 1)]
    report = {}
    out = changes.order_changes(question, chosen, report)
    assert out == chosen and not any("change" in c for c in out)
    assert report.get("changes", []) == []


def test_the_packet_shows_a_line_said_again_once():
    asked = [
        chat(i, f"c{i}", f"2026-0{i}-01 10:00 Sam: What should I bring to a 1:1 with my manager?")
        for i in (1, 2)
    ]
    told = chat(3, "c3", "2026-03-01 10:00 Sam: My manager is Priya Nair.")
    short = [chat(i, f"d{i}", f"2026-0{i}-02 10:00 Sam: Yes.") for i in (4, 5)]  # too short to matter
    kept = search.packet_choice("Who is my manager?", [*asked, told, *short], SETTINGS)
    assert [c["chunk_id"] for c in kept] == [1, 3, 4, 5]


@pytest.mark.parametrize(
    "newer",
    [
        "Sum insured €30,000; if moving house, the address must be updated first.",
        "Quotes for the same sum insured (€30,000), and check the house excess hasn't changed.",
        "€30,000 of cover, and the house's new address goes on the policy first.",
        "Cover is €30,000.\nIf we move house, tell the insurer before the move date.",
    ],
)
def test_a_word_that_says_a_change_updates_only_where_its_clause_tells_a_value(newer):
    """A newer line that holds a change word ("moving", "changed", "new", "move") and one value
    elsewhere (a sum insured) says nothing changed of that value: it updates no older line of its
    kind that holds the question's word ("house")."""
    old = note(1, "2026-01-03", "House pot savings: €1,500 a month.")
    report = {}
    chosen = [old, note(2, "2026-12-06", newer)]
    assert changes.order_changes("What do I put in the house pot?", chosen, report) == chosen
    assert report["changes"] == []
    assert not changes.says_changed(newer, set())


@pytest.mark.parametrize(
    "newer",
    [
        "The house pot is now €1,800.",
        "Raised the house pot to €1,800.",
        "House pot moved to €1,800, and the buffer stays as it is.",
        "Costs went up, so I put €1,800 a month into the house pot instead.",
    ],
)
def test_a_word_that_says_a_change_beside_a_value_updates(newer):
    old = note(1, "2026-01-03", "House pot savings: €1,500 a month.")
    out = changes.order_changes("What do I put in the house pot?", [old, note(2, "2026-06-01", newer)], {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(2, "later"), (1, "earlier")]
    assert out[0]["change"]["update"] is True


@pytest.mark.parametrize(
    "newer",
    ["The Renault Zoe arrived, so that's my car now.", "Picked up a Renault Zoe, and it's my car now."],
)
def test_a_clause_whose_subject_points_back_tells_of_the_value_before_it(newer):
    """ "so that's my car now" says "car" of the Renault Zoe; "so the budget needs redoing" says
    nothing of the rent before it (test_no_change_is_said_where_none_is)."""
    old = chat(1, "c0", "2025-08-23 20:49 Sam: Our Volkswagen Golf needs new wipers, which size?")
    new = chat(2, "c1", f"2026-01-04 16:58 Sam: {newer}")
    out = changes.order_changes("What car do I drive?", [old, new], {})
    assert [(c["chunk_id"], c["change"]["kind"]) for c in out] == [(2, "later"), (1, "earlier")]


def test_a_name_the_question_writes_and_a_month_are_no_values_of_what_it_asks():
    """ "Gull Lane" is what "my offer on the Gull Lane house" asks about; "Nov" is a month, no
    place: a diary's house near Cove End and a budget's November review tell no two values of one
    thing."""
    asked = {"has", "my", "offer", "on", "the", "gull", "lane", "house", "been", "accepted"}
    values, about = changes.statement("Reviewed in Nov: offer made on Gull Lane.", asked)
    assert values == {("month", "Nov")} and {"gull", "lan", "offer"} <= about
    # a line's mark ("- **", "## ", "| ") goes before the word that opens it
    for line in ("- **Nov:** offer made on Gull Lane.", "## Policies and accounts", "| Rent | €1,210 |"):
        assert not {v for k, v in changes.statement(line, asked)[0] if k.startswith(("name", "month"))}
    diary = note(1, "2026-11-22", "A narrow terraced house on Gull Lane, five minutes from Cove End.")
    budget = note(2, "2026-01-03", "- **Nov:** offer made on Gull Lane. If accepted: solicitor ~€1,800.")
    chosen = [diary, budget]
    assert changes.order_changes("Has my offer on the Gull Lane house been accepted?", chosen, {}) == chosen


def test_a_word_of_the_question_used_as_another_part_of_speech_pulls_no_newer_line_in():
    # "Where do I live?" asks a verb; "a living document" holds the word as a noun's modifier. A
    # newer line sharing another word ("planning", "planned") neither joins it nor marks it.
    cited = [
        note(1, "2025-10-19", "I work with people I like, I live in a town by the sea."),
        note(2, "2026-10-24", 'We are planning the move from PostgreSQL 16 to 18, and Iris has started a document '
             'titled "Things That Will Definitely Go Wrong", which she assures me is "a living document".'),
    ]  # fmt: skip
    newer = note(3, "2026-11-22", "The manuscript: 58 of the planned 70 pages of revisions done.")
    report = {}
    assert changes.order_changes("Where do I live?", cited, report, [*cited, newer]) == cited
    assert report["changes"] == []
    # the same words used as the question uses them still tell a change
    lived = [note(1, "2025-01-01", "I live in Leeds."), note(2, "2026-01-01", "We live in York now.")]
    out = changes.order_changes("Where do I live?", lived, {})
    assert [c["chunk_id"] for c in out] == [2, 1] and out[0]["change"]["kind"] == "later"
    reports = [
        note(1, "2025-01-01", "I report to Priya Nair."),
        note(2, "2026-01-01", "I report to Tomasz Wolski now."),
    ]
    out = changes.order_changes("Who do I report to?", reports, {})
    assert [c["chunk_id"] for c in out] == [2, 1] and out[1]["change"]["kind"] == "earlier"


def test_a_word_is_used_as_the_words_before_it_say():
    words = search.query_words("Who do I report to? I wrote the Atlas closing report. Lives in the cupboard")
    assert changes.word_role(words, words.index("report")) == "verb"
    assert changes.word_role(words, words.index("report", 4)) == "noun"  # "the Atlas closing report"
    assert changes.word_role(words, words.index("lives")) is None
    assert changes.word_roles(search.query_words("What's my rent?")) == {"rent": "noun"}
