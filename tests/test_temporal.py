"""The temporal signal detector: plpy/temporal.py as plain Python, and exo.temporal_signal."""

import datetime
import json
import time

import psycopg
import pytest
import temporal

TODAY = datetime.date(2026, 11, 29)
CUES = ["history", "growing up", "back when", "used to", "originally", "as of", "when I was", "childhood"]


def _detect(query, cues=CUES, today=TODAY, **kwargs):
    return temporal.detect(query, cues, today, **kwargs)


def _kinds(result):
    return [(s["kind"], s["text"]) for s in result["signals"]]


# -- years ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "year"),
    [("where did I work in 2014?", 2014), ("2009", 2009), ("(1999)", 1999), ("in 2014年", 2014)],
)
def test_a_standalone_year_is_a_signal_that_opens_the_archive(query, year):
    result = _detect(query)
    assert [s["kind"] for s in result["signals"]] == ["year"]
    signal = result["signals"][0]
    assert signal["year"] == year
    assert query[signal["start"] : signal["end"]] == signal["text"] == str(year)
    assert result["signal"] and result["opens_archive"]
    assert result["years"] == [year]


@pytest.mark.parametrize(
    "query",
    ["120145", "v2014", "2014th", "3.2014", "1,2014", "$2014", "at 20:14", "2050", "1899", "room 12014"],
)
def test_numbers_that_are_not_years(query):
    assert _detect(query) == {
        "signal": False,
        "opens_archive": False,
        "years": [],
        "truncated": False,
        "signals": [],
        "span": None,
    }


def test_a_range_gives_both_years():
    result = _detect("what did I build 1999-2003")
    assert _kinds(result) == [("year", "1999"), ("year", "2003")]
    assert result["years"] == [1999, 2003]


def test_the_current_year_is_a_signal_that_does_not_open_the_archive():
    result = _detect("what am I doing in 2026?")
    assert _kinds(result) == [("year", "2026")]
    assert result["signal"] and not result["opens_archive"]
    # whatever the threshold: the current year never opens it on its own
    assert not _detect("plans for 2026", today=datetime.date(2026, 12, 31), archive_after_days=0)[
        "opens_archive"
    ]
    # next year is a signal too, and never opens it; the year after that is not a year
    assert _kinds(_detect("goals for 2027")) == [("year", "2027")]
    assert not _detect("goals for 2027")["opens_archive"]
    assert not _detect("goals for 2028")["signal"]


def test_last_year_opens_the_archive_even_on_new_years_day():
    result = _detect("trip in 2025", today=datetime.date(2026, 1, 1))
    assert result["opens_archive"]  # 1 January 2025 is 365 days back
    assert not _detect("trip in 2025", today=datetime.date(2026, 1, 1), archive_after_days=400)[
        "opens_archive"
    ]


# -- dates and month-years ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "iso"),
    [
        ("2014-03-02", "2014-03-02"),
        ("on 2014/03/02.", "2014-03-02"),
        ("4 March 2014", "2014-03-04"),
        ("the 4th of March, 2014", "2014-03-04"),
        ("March 4, 2014", "2014-03-04"),
        ("mar. 4th 2014", "2014-03-04"),
        ("13/03/2014", "2014-03-13"),
        ("03/13/2014", "2014-03-13"),
        ("02/03/2014", "2014-03-02"),  # both orders are dates: day first by default
    ],
)
def test_dates(query, iso):
    result = _detect(query)
    assert [s["kind"] for s in result["signals"]] == ["date"]
    assert result["signals"][0]["date"] == iso
    assert result["years"] == [2014]
    assert result["opens_archive"]


def test_an_impossible_date_is_not_a_date():
    assert [s["kind"] for s in _detect("2014-02-30")["signals"]] == ["year"]
    assert _detect("31 February 2014")["signals"][0]["kind"] != "date"


@pytest.mark.parametrize(
    "query",
    [
        "March 2014",
        "Mar 2014",
        "mar. 2014",
        "March, 2014",
        "March of 2014",
        "2014-03",
        "2014/03",
        "03/2014",
        "3/2014",
    ],
)
def test_month_years(query):
    result = _detect("what happened in " + query + "?")
    assert [(s["kind"], s["text"], s["year"], s["month"]) for s in result["signals"]] == [
        ("month_year", query, 2014, 3)
    ]
    assert result["opens_archive"]


def test_a_month_without_a_year_is_the_latest_such_month():
    # today is 29 November 2026
    assert _detect("what did I do in March?")["span"] == {"first": "2026-03-01", "last": "2026-03-31"}
    assert _detect("what did I do in December?")["span"] == {"first": "2025-12-01", "last": "2025-12-31"}
    assert _detect("what did I do last November?")["span"] == {"first": "2025-11-01", "last": "2025-11-30"}
    assert _detect("what did I do this November?")["span"] == {"first": "2026-11-01", "last": "2026-11-30"}
    assert not _detect("march in march")["signal"]  # a verb, a word: no capital
    assert not _detect("in may we trust")["signal"]
    assert _detect("2014-13")["signals"][0]["kind"] != "month_year"


def test_a_recent_month_follows_the_threshold():
    assert not _detect("March 2026")["opens_archive"]  # 273 days back
    assert _detect("March 2026", archive_after_days=200)["opens_archive"]
    assert _detect("November 2025")["opens_archive"]  # 1 November 2025 is 393 days back
    assert not _detect("2026-12-25")["opens_archive"]  # the future never opens it


# -- decades -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("music of the 90s", 1990),
        ("music of the '90s", 1990),
        ("music of the \u201990s", 1990),
        ("1990s music", 1990),
        ("1990's music", 1990),
        ("90's music", 1990),
        ("nineties music", 1990),
        ("the eighties", 1980),
        ("in the 2010s", 2010),
        ("the late 70s", 1970),
        ("mid-90s", 1990),
        ("the noughties", 2000),
        ("the 20s", 2020),  # the latest twenties that has begun
        ("the 30s", 1930),
    ],
)
def test_decades(query, first):
    result = _detect(query)
    assert [(s["kind"], s["first"], s["last"]) for s in result["signals"]] == [("decade", first, first + 9)]
    assert result["years"] == [first, first + 9]
    assert result["opens_archive"]


@pytest.mark.parametrize("query", ["in my 30s", "she is in her nineties", "his late 80s", "100s of files"])
def test_ages_and_counts_are_not_decades(query):
    assert not _detect(query)["signal"]


# -- relative expressions ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "unit", "amount", "year", "opens"),
    [
        ("last year", "year", 1, 2025, True),
        ("two years ago", "year", 2, 2024, True),
        ("3 years ago", "year", 3, 2023, True),
        ("a decade ago", "decade", 1, 2016, True),
        ("the year before last", "year", 2, 2024, True),
        ("last month", "month", 1, 2026, False),
        ("last week", "week", 1, 2026, False),
        ("six months ago", "month", 6, 2026, False),
    ],
)
def test_relative_expressions(query, unit, amount, year, opens):
    result = _detect(query)
    [signal] = result["signals"]
    assert (signal["kind"], signal["unit"], signal["amount"], signal["year"]) == (
        "relative",
        unit,
        amount,
        year,
    )
    assert not signal["approximate"]
    assert result["opens_archive"] is opens


def test_vague_relative_expressions_name_no_year():
    result = _detect("years ago, a few years ago, decades ago, eighteen months ago")
    assert [(s["text"], s["approximate"], s["year"]) for s in result["signals"]] == [
        ("years ago", True, None),
        ("a few years ago", True, None),
        ("decades ago", True, None),
        ("months ago", True, None),  # "eighteen" is outside the small vocabulary
    ]
    assert result["years"] == []
    assert result["opens_archive"]


def test_huge_amounts_do_not_overflow():
    result = _detect("9999 decades ago, 9999 days ago")
    assert [s["kind"] for s in result["signals"]] == ["relative", "relative"]
    assert result["opens_archive"]


# -- cues ------------------------------------------------------------------------------------


def test_cues_match_whole_words_case_insensitively_with_any_whitespace():
    result = _detect("What did I USED TO think? Growing\t\n up, back  when, Originally?")
    assert [(s["text"], s["cue"]) for s in result["signals"]] == [
        ("USED TO", "used to"),
        ("Growing\t\n up", "growing up"),
        ("back  when", "back when"),
        ("Originally", "originally"),
    ]
    assert all(s["kind"] == "cue" and s["opens_archive"] for s in result["signals"])
    assert result["opens_archive"] and result["years"] == []


@pytest.mark.parametrize("query", ["unused tokens", "used tokens", "prehistory", "histories", "originally_x"])
def test_cues_need_word_boundaries(query):
    assert not _detect(query)["signal"]


def test_only_the_configured_cues_are_detected():
    query = "my childhood home, anymore"
    assert [s["cue"] for s in _detect(query)["signals"]] == ["childhood"]
    assert [s["cue"] for s in _detect(query, cues=["anymore"])["signals"]] == ["anymore"]
    assert not _detect(query, cues=[])["signal"]
    assert not _detect(query, cues=["", "   "])["signal"]


def test_as_of_the_current_year_is_a_signal_that_does_not_open_the_archive():
    result = _detect("as of 2026 what is my salary")
    assert _kinds(result) == [("cue", "as of"), ("year", "2026")]
    assert result["signals"][0]["anchored"] == "time"
    assert result["signal"] and not result["opens_archive"]


def test_as_of_a_past_time_opens_the_archive_through_the_time():
    result = _detect("as of, March 2019")
    assert _kinds(result) == [("cue", "as of"), ("month_year", "March 2019")]
    assert [s["opens_archive"] for s in result["signals"]] == [False, True]
    assert result["opens_archive"]


def test_a_cue_anchored_to_the_present_does_not_open_the_archive():
    for query in ("as of now", "as of today", "As of this year"):
        result = _detect(query)
        assert result["signal"] and not result["opens_archive"], query
        assert result["signals"][0]["anchored"] == "present"
    # not directly followed: the cue stands alone
    assert _detect("as of the latest news")["opens_archive"]
    assert _detect("the history of 2026")["opens_archive"]


def test_bad_cue_lists_are_refused():
    with pytest.raises(ValueError, match="list of strings"):
        _detect("x", cues="history")
    with pytest.raises(ValueError, match="list of strings"):
        _detect("x", cues=["history", 3])
    with pytest.raises(ValueError, match="at most"):
        _detect("x", cues=["cue"] * (temporal.MAX_CUES + 1))
    with pytest.raises(ValueError, match="archive_after_days"):
        _detect("x", archive_after_days=-1)


def test_cue_phrases_are_literal_not_patterns():
    assert not _detect("aaaa", cues=["a+", "(", "[a-z]"])["signal"]
    assert [s["text"] for s in _detect("a+ (", cues=["a+", "("])["signals"]] == ["a+", "("]
    assert [s["cue"] for s in _detect("x c++ y", cues=["c++"])["signals"]] == ["c++"]


# -- hostile input ------------------------------------------------------------------------


def test_hostile_input_is_data():
    query = "$$; drop table x; -- '\"\x00\x07\u200b\u202e in 2014 $q$ \\ \ud83d\ude00 used\x0bto"
    result = _detect(query)
    assert [s["kind"] for s in result["signals"]] == ["year", "cue"]
    assert [(query[s["start"] : s["end"]], s["text"]) for s in result["signals"]] == [
        ("2014", "2014"),
        ("used\x0bto", "used\x0bto"),  # a vertical tab is whitespace, kept as written
    ]
    json.dumps(result)  # serialisable as the function returns it


def test_control_characters_count_as_spaces_and_none_is_empty():
    result = _detect("back\x00when\x1f2014")
    assert _kinds(result) == [("cue", "back when"), ("year", "2014")]
    assert not _detect(None)["signal"]
    assert not _detect("")["signal"]


def test_only_the_opening_is_scanned_and_long_input_is_fast():
    head = "x " * 995 + "in 2014 "  # the year ends before character 2,000, the cap
    query = head + "1999 used to the 90s " * 5000  # about 100 KB, signals past the cap
    assert len(query) > 100_000
    started = time.perf_counter()
    result = _detect(query)
    assert time.perf_counter() - started < 1.0
    assert result["truncated"]
    assert result["years"] == [2014]
    nasty = ("1" * 50 + "/") * 2000 + ("the " * 25_000) + ("as of " * 20_000)
    started = time.perf_counter()
    _detect(nasty, cues=["as of", "the the the x"])
    assert time.perf_counter() - started < 1.0


def test_detection_is_deterministic():
    query = "growing up in the 90s, as of 2026, 2014-03-02, March 2014, last year, in 2009"
    assert _detect(query) == _detect(query)
    assert [s["start"] for s in _detect(query)["signals"]] == sorted(
        s["start"] for s in _detect(query)["signals"]
    )


# -- years from 1000, centuries and the numbers that are not years --------------------------


@pytest.mark.parametrize(
    ("query", "year"),
    [
        ("what happened in 1803", 1803),
        ("since 1066?", 1066),
        ("in the year 1066", 1066),
        ("built c. 1790", 1790),
        ("built c.1790", 1790),
        ("circa 1790", 1790),
        ("around 1500", 1500),
        ("before 1850, after 1899", 1850),
        ("1066 AD", 1066),
        ("A.D. 1066", 1066),
        ("1492 CE", 1492),
        ("until 1000", 1000),
    ],
)
def test_a_year_before_1900_needs_a_year_like_context(query, year):
    result = _detect(query)
    assert [s["kind"] for s in result["signals"]][:1] == ["year"]
    assert result["signals"][0]["year"] == year
    assert result["opens_archive"]


@pytest.mark.parametrize(
    "query",
    [
        "1500 people",
        "room 1850",
        "$1,200",
        "1850 km",
        "flight 1066",
        "No. 1234",
        "1200 pages",
        "a town of 1500 people",
        "by 1850 km",
        "in 1200 pages",
        "a total of 1500",
        "1200 BC",
        "in 1200 BCE",
        "in 1500 years",
        "1790-1803",  # no year on either side: a page range, a part number
        "in 999",
        "etc. 1500",
        "1803",
        "increased from 1024 to 16",
        "increased from 1024 to 4096",
        "from 1040 to 1904 bytes",
        "a 1024-bit key",
        "multiplied by 1000",
        "2048 instead of 1024",
        "1214 tests out of 1217",
        "patch 8.1.1424",
    ],
)
def test_numbers_below_1900_that_are_not_years(query):
    assert not _detect(query)["signal"], query


def test_a_range_continues_from_a_year():
    assert [s["year"] for s in _detect("from 1790 to 1803")["signals"]] == [1790, 1803]
    assert [s["year"] for s in _detect("between 1790 and 1803")["signals"]] == [1790, 1803]
    assert [s["year"] for s in _detect("in 1790-1803")["signals"]] == [1790, 1803]
    assert _detect("from 1790 to 1803")["years"] == [1790, 1803]
    assert _detect("2022-1271")["years"] == [2022]  # a range runs forward


@pytest.mark.parametrize(
    "query", ["When was CVE-2023-38545 fixed?", "Is INV-2020-00412 paid?", "ticket ABC_2019_7"]
)
def test_a_number_between_an_identifiers_parts_is_not_a_year(query):
    assert not _detect(query)["signal"], query


@pytest.mark.parametrize("query", ["FY-2023", "the 2023-24 season", "covid-2020 notes", "in 2022-2023"])
def test_a_year_joined_to_one_part_only_is_still_a_year(query):
    assert _detect(query)["signal"], query


def test_a_count_after_a_modern_number_is_not_a_year_unless_the_context_says_year():
    assert not _detect("a 1950 km drive")["signal"]
    assert not _detect("a 2048-bit key")["signal"]
    assert _kinds(_detect("in 2020 people moved"))[0] == ("year", "2020")
    result = _detect("2000 years ago")
    assert _kinds(result) == [("relative", "2000 years ago")]
    assert result["signals"][0]["year"] is None and result["years"] == []  # year 26: out of range


@pytest.mark.parametrize(
    ("query", "kind", "iso", "year"),
    [
        ("March 4, 1803", "date", "1803-03-04", 1803),
        ("4 July 1776", "date", "1776-07-04", 1776),
        ("1776-07-04", "date", "1776-07-04", 1776),
        ("in May 1790", "month_year", None, 1790),
        ("March of 1066", "month_year", None, 1066),
    ],
)
def test_dates_and_months_before_1900(query, kind, iso, year):
    [signal] = _detect(query)["signals"]
    assert (signal["kind"], signal.get("date"), signal["year"]) == (kind, iso, year)
    assert signal["opens_archive"]


def test_numeric_months_before_1900_are_not_months():
    assert not _detect("part 1850-12")["signal"]
    assert not _detect("12/1850")["signal"]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("the 1790s", 1790),
        ("in the 1230s", 1230),
        ("the 1790's", 1790),
        ("the eighteen-nineties", 1890),
        ("the eighteen nineties", 1890),
        ("the Nineteen-Sixties", 1960),
        ("the 2000s", 2000),  # the decade: the century is young
    ],
)
def test_decades_before_1900_and_in_words(query, first):
    [signal] = _detect(query)["signals"]
    assert (signal["kind"], signal["first"], signal["last"]) == ("decade", first, first + 9)
    assert _detect(query)["years"] == [first, first + 9]


@pytest.mark.parametrize(
    ("query", "first", "last"),
    [
        ("the 1800s", 1800, 1899),
        ("the 1800's", 1800, 1899),
        ("the 1900s", 1900, 1999),
        ("the 19th century", 1800, 1899),
        ("the nineteenth century", 1800, 1899),
        ("19th-century letters", 1800, 1899),
        ("the eighteen hundreds", 1800, 1899),
        ("the 11th century", 1000, 1099),
        ("the twenty-first century", 2000, 2099),
        ("the twenty first century", 2000, 2099),
        ("early 1800s", 1800, 1832),
        ("the mid-19th century", 1833, 1865),
        ("late 19th-century", 1866, 1899),
        ("the late eighteenth century", 1766, 1799),
    ],
)
def test_centuries(query, first, last):
    result = _detect(query)
    assert [(s["kind"], s["first"], s["last"]) for s in result["signals"]] == [("century", first, last)]
    assert result["years"] == [first, last]
    assert result["opens_archive"]


@pytest.mark.parametrize("query", ["the 5th century", "the 22nd century", "1000s of files", "1800s of rows"])
def test_centuries_out_of_range_and_counts_are_not_signals(query):
    assert not _detect(query)["signal"]


def test_a_century_or_an_old_year_anchors_a_cue():
    result = _detect("as of the 19th century")
    assert _kinds(result) == [("cue", "as of"), ("century", "the 19th century")]
    assert result["signals"][0]["anchored"] == "time"
    assert _detect("as of 1803")["signals"][0]["anchored"] == "time"


def test_old_years_and_centuries_follow_as_of():
    # "the 20s" as of 1925 is the 1920s; a century not begun by then does not open the archive
    then = datetime.date(1925, 6, 1)
    assert _detect("the 20s", today=then)["signals"][0]["first"] == 1920
    assert not _detect("the twenty-first century", today=then)["opens_archive"]
    assert not _detect("in 1930", today=then)["signal"]  # after next year: not a year then


# -- in the database -----------------------------------------------------------------------


def _signal(conn, query, as_of="2026-11-29"):
    return conn.execute("select exo.temporal_signal(%s, %s::date)", (query, as_of)).fetchone()[0]


def test_the_reader_detects_a_year_in_the_database(db):
    with db.connect("exo_reader") as conn:
        assert conn.execute("show default_transaction_read_only").fetchone() == ("on",)
        result = _signal(conn, "where did I work in 2014?")
        today = conn.execute("select exo.temporal_signal('where did I work in 2014?')").fetchone()[0]
        present = _signal(conn, "what is my current salary?")
    assert [(s["kind"], s["text"], s["year"]) for s in result["signals"]] == [("year", "2014", 2014)]
    assert result["opens_archive"] and result["years"] == [2014]
    assert today["opens_archive"]  # as_of defaults to today
    assert not present["signal"] and not present["opens_archive"]


def test_the_default_cues_come_from_the_settings(db):
    with db.connect("exo_reader") as conn:
        result = _signal(conn, "Growing up, what did I used to eat? As of 2026.")
    assert [(s["kind"], s["text"]) for s in result["signals"]] == [
        ("cue", "Growing up"),
        ("cue", "used to"),
        ("cue", "As of"),
        ("year", "2026"),
    ]


def test_changing_the_settings_changes_what_is_detected(db):
    query = "what did I cook when I was a student? in March 2026"
    with db.connect("exo_reader") as conn:
        before = _signal(conn, query)
    with db.connect() as admin:
        admin.execute(
            "update exo_private.settings set value = '[\"student\"]' where key = 'retrieval.temporal_cues'"
        )
        admin.execute(
            "update exo_private.settings set value = '200' where key = 'retrieval.archive_after_days'"
        )
    with db.connect("exo_reader") as conn:
        after = _signal(conn, query)
    assert [s["text"] for s in before["signals"]] == ["when I was", "March 2026"]
    assert [s["text"] for s in after["signals"]] == ["student", "March 2026"]
    assert [s["opens_archive"] for s in before["signals"]] == [True, False]
    assert [s["opens_archive"] for s in after["signals"]] == [True, True]


def test_a_missing_setting_is_a_clear_error(db):
    with db.connect() as admin:
        admin.execute("delete from exo_private.settings where key = 'retrieval.temporal_cues'")
        with pytest.raises(psycopg.Error, match="retrieval.temporal_cues"):
            _signal(admin, "in 2014")


def test_hostile_queries_neither_fail_nor_write(db):
    queries = [
        "$$ select 1; $$ drop table exo_private.settings; -- in 2014",
        "'); delete from exo_private.settings; --\t\x01\x7f\u202e 'used to' \"2014\"",
        "$json$]'\\x $q$ " * 500,
        None,
    ]
    with db.connect() as admin:
        before = admin.execute("select count(*), max(updated_at) from exo_private.settings").fetchone()
    with db.connect("exo_reader", autocommit=False) as conn:
        results = [_signal(conn, q) for q in queries]
        xid = conn.execute("select txid_current_if_assigned()").fetchone()[0]
    with db.connect() as admin:
        after = admin.execute("select count(*), max(updated_at) from exo_private.settings").fetchone()
    assert xid is None  # the transaction that ran them wrote nothing
    assert before == after
    assert results[0]["years"] == [2014]
    assert [s["kind"] for s in results[1]["signals"]] == ["cue", "year"]
    assert results[2]["truncated"] and not results[2]["signal"]
    assert not results[3]["signal"]


def test_the_reader_cannot_call_the_internal_function(db):
    with db.connect("exo_reader") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("select exo_private.detect_temporal('2014', '[]', current_date, 365)")


# -- the days a question names ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "first", "last"),
    [
        ("on 2025/04/03", "2025-04-03", "2025-04-03"),
        ("on June 24th, 2025", "2025-06-24", "2025-06-24"),
        ("on 24/06/2025", "2025-06-24", "2025-06-24"),
        ("on 02/03/2014", "2014-03-02", "2014-03-02"),  # both orders are dates: day first by default
        ("in March 2025", "2025-03-01", "2025-03-31"),
        ("in February 2024", "2024-02-01", "2024-02-29"),
        ("in 2014", "2014-01-01", "2014-12-31"),
        ("in the 1990s", "1990-01-01", "1999-12-31"),
        ("between 2011 and 2013", "2011-01-01", "2013-12-31"),
        ("three days ago", "2026-11-26", "2026-11-26"),
        ("two weeks ago", "2026-11-12", "2026-11-18"),
        ("last week", "2026-11-16", "2026-11-22"),  # Monday to Sunday before this week
        ("last month", "2026-10-01", "2026-10-31"),
        ("yesterday", "2026-11-28", "2026-11-28"),
        ("the day before yesterday", "2026-11-27", "2026-11-27"),
        ("last Tuesday", "2026-11-24", "2026-11-24"),
        ("on Sunday", "2026-11-29", "2026-11-29"),  # today is a Sunday
        ("last Sunday", "2026-11-22", "2026-11-22"),
        ("24 June", "2026-06-24", "2026-06-24"),  # the latest 24 June
        ("on the 30th of December", "2025-12-30", "2025-12-30"),  # none yet this year
        ("Tuesday, June 24", "2025-06-24", "2025-06-24"),  # the latest on a Tuesday
        ("Friday 29 February", "2008-02-29", "2008-02-29"),
    ],
)
def test_the_span_is_the_days_the_question_names(query, first, last):
    assert _detect(query)["span"] == {"first": first, "last": last}


@pytest.mark.parametrize(
    "query",
    [
        "I may 2 of them",
        "at the mar 3 stand",
        "June 24 12:30",
        "version 24 June.2",
        "a few days ago",
        "as of now",
    ],
)
def test_no_span_where_nothing_names_days(query):
    assert _detect(query)["span"] is None


def test_a_weekday_before_a_date_is_part_of_it():
    result = _detect("what did I do on Tuesday, 24 June 2025?")
    assert _kinds(result) == [("date", "24 June 2025")]  # "on Tuesday" is no other day
    assert result["span"] == {"first": "2025-06-24", "last": "2025-06-24"}


def test_the_numeric_order_reads_a_date_both_ways_of_which_are_dates():
    assert _detect("on 02/03/2014", numeric_order="mdy")["span"] == {
        "first": "2014-02-03",
        "last": "2014-02-03",
    }
    assert _detect("on 24/06/2025", numeric_order="mdy")["span"] == {
        "first": "2025-06-24",
        "last": "2025-06-24",
    }
    with pytest.raises(ValueError, match="numeric_order must be 'dmy' or 'mdy'"):
        _detect("on 02/03/2014", numeric_order="ymd")
