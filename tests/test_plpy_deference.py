"""plpy/deference.py as plain Python: what near means for a document's heading and for chat messages."""

import deference

SUBJECTS = deference.compile_subjects(
    [{"subject": "Walter Rivera", "aliases": ["Grandpa Walter", "Grandpa"]}]
)
CUES = ["funeral", "died", "hospice", "miss him"]
WALTER = "Walter Rivera"


def subjects(marks):
    return [[m["subject"] for m in one] for one in marks]


# -- a document's heading ---------------------------------------------------------------


def test_a_title_or_path_is_near_every_chunk_of_its_document():
    head = deference.heading("The funeral", "diary/2017/x.md")
    assert head == "The funeral\ndiary/2017/x.md"
    # the cue in the title, the name in the chunk
    assert deference.chunk_marks("Grandpa would have laughed.", head, SUBJECTS, CUES, []) == [
        {"subject": WALTER, "rule": "cue 'funeral' with 'Grandpa'"}
    ]
    assert deference.chunk_marks("We sang.", head, SUBJECTS, CUES, []) == []  # no name at all
    # the name in the path, the cue in the chunk
    path_head = deference.heading(None, "diary/family/grandpa-notes.md")
    assert deference.chunk_marks("He died in March.", path_head, SUBJECTS, CUES, []) != []
    # a title with both charges every chunk, however plain
    both = deference.heading("Grandpa's funeral", "diary/x.md")
    assert deference.chunk_marks("Tea and cake.", both, SUBJECTS, CUES, []) != []
    assert deference.chunk_marks("Tea and cake.", "", SUBJECTS, CUES, []) == []


def test_a_neutral_heading_changes_nothing():
    head = deference.heading("Grandpa Walter's Chili", "diary/family/grandpa-walters-chili.md")
    assert deference.chunk_marks("Two onions, one tin of beans.", head, SUBJECTS, CUES, []) == []


# -- chat messages ----------------------------------------------------------------------


def test_the_message_before_or_after_is_near():
    lines = [
        "Ann: Lovely weather today.",
        "Sam: Grandpa is in the hospice now.",  # name and cue in one message
        "Ann: I'm so sorry.",  # the reply to it
        "Sam: Shall we go for a walk?",
        "Ann: The funeral is on Friday.",  # a cue here ...
        "Sam: Grandpa Walter would have hated the hymns.",  # ... the name in the reply
        "Ann: See you there.",
        "Sam: Bring an umbrella.",
    ]
    assert subjects(deference.message_marks(lines, SUBJECTS, CUES)) == [
        [WALTER],  # before the charged one: its pair holds the name and the cue
        [WALTER],
        [WALTER],
        [],
        [WALTER],
        [WALTER],
        [],  # after it: the name alone, no cue
        [],
    ]
    rules = deference.message_marks(lines, SUBJECTS, CUES)
    assert rules[4] == [{"subject": WALTER, "rule": "cue 'funeral' with 'Grandpa Walter'"}]


def test_a_name_and_a_cue_two_messages_apart_are_not_near():
    lines = ["Sam: How is Grandpa?", "Ann: Fine, why?", "Sam: A funeral passed the house."]
    assert subjects(deference.message_marks(lines, SUBJECTS, CUES)) == [[], [], []]


def test_the_sender_and_the_title_count():
    # the subject is the sender
    lines = ["Grandpa Walter: Back in the hospice, the food is awful.", "Sam: Oh no."]
    assert subjects(deference.message_marks(lines, SUBJECTS, CUES)) == [[WALTER], [WALTER]]
    # a title naming him with a cue is near every message
    plain = ["Ann: Tea?", "Sam: Yes please.", "Ann: Milk?"]
    assert subjects(deference.message_marks(plain, SUBJECTS, CUES, "Grandpa's funeral")) == [[WALTER]] * 3
    assert subjects(deference.message_marks(plain, SUBJECTS, CUES, "Tea time")) == [[], [], []]


def test_one_message_alone_and_no_subjects():
    assert subjects(deference.message_marks(["Sam: Grandpa died."], SUBJECTS, CUES)) == [[WALTER]]
    assert deference.message_marks(["Sam: Grandpa died."], [], CUES) == [[]]
    assert deference.message_marks([], SUBJECTS, CUES) == []


# -- a document read as a whole ---------------------------------------------------------


def document(texts, title=None, path="diary/x.md", frontmatter=None):
    return subjects(deference.document_marks(texts, title, path, frontmatter, SUBJECTS, CUES))


def test_frontmatter_fields_head_every_chunk():
    frontmatter = {"subject": "Walter Rivera", "died": "19 March 2017, St Brigid's"}
    assert document(["He was peaceful.", "We sat by the window."], frontmatter=frontmatter) == [[WALTER]] * 2
    rules = deference.document_marks(["Tea."], None, "x.md", frontmatter, SUBJECTS, CUES)
    assert rules == [[{"subject": WALTER, "rule": "cue 'died' with 'Walter Rivera'"}]]
    rules = deference.document_marks(["Tea."], None, "x.md", {"subject": "Walter Rivera"}, SUBJECTS, CUES)
    assert rules == [[{"subject": WALTER, "rule": "about: 'Walter Rivera' is its name"}]]
    # a field that names him with no cue anywhere: the document is about him all the same
    assert document(["Tea."], frontmatter={"people": ["Sam", "grandpa  walter"]}) == [[WALTER]]
    assert document(["Tea."], frontmatter={"tags": ["family", "recipe"]}) == [[]]


def test_a_title_that_is_the_subjects_name_charges_every_chunk():
    assert document(["Tea and cake.", "A long walk."], title="Grandpa") == [[WALTER]] * 2
    assert document(["Two onions."], title="Grandpa Walter's Chili") == [[]]  # about chili


def test_a_part_of_the_name_in_a_charged_document_is_charged():
    texts = [
        "Grandpa moved to the hospice on Monday.",  # an alias near a cue
        "Tomas signed it off.",
        "The nurses call him Mr. Walter and he pretends to be annoyed.",  # a part of his name
    ]
    assert document(texts) == [[WALTER], [], [WALTER]]
    rules = deference.document_marks(texts, None, "x.md", None, SUBJECTS, CUES)
    assert rules[2] == [{"subject": WALTER, "rule": "names 'Walter' in a document charged for it"}]
    # the same words in a document charged for nothing: nothing
    assert document(texts[1:]) == [[], []]


def test_he_or_she_right_after_a_charged_chunk_continues_the_chain():
    texts = [
        "Grandpa is in the hospice.",
        "He asked for the radio.",  # the chain
        "She brought it from the workshop; her hands shook.",  # goes on
        "The kettle boiled.",  # breaks it
        "He said nothing.",  # after a plain chunk: nothing
    ]
    assert document(texts) == [[WALTER], [WALTER], [WALTER], [], []]
    assert document(["He asked for the radio."]) == [[]]
