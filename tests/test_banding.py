"""plpy/banding.py as plain Python: when a document was written, from its best evidence."""

import datetime
import re
import time

import banding
import pytest

TODAY = datetime.date(2026, 11, 29)
MTIME = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)


def _ns(moment: datetime.datetime) -> int:
    return int(moment.timestamp() * 1e9)


def written(text="", path="notes/x.txt", frontmatter=None, metadata=None, mtime=MTIME):
    """(written_at, reason) as band_for finds them."""
    band = banding.band_for(frontmatter or {}, text, path, _ns(mtime), False, TODAY, 365, 1095, metadata)
    return band["written_at"], band["reason"].split(" (", 1)[1].rsplit("), ", 1)[0]


FILLER = "\n\n".join(["A paragraph about nothing in particular, long enough to push dates apart."] * 20)


def test_each_source_in_order_and_the_reason_names_it():
    # Every source present; removing the best one each time exposes the next.
    head = "Farewell Address, 1796\n\n"
    body = "Delivered on September 19, 1796 in Philadelphia.\n\n"
    closing = "\n\nSigned 17 September 1797."
    sources = {
        "frontmatter": {"date": "1796-09-17"},
        "metadata": {"date": "1796-09-20T10:00:00+00:00", "date_source": "email Date header"},
        "title": {"title": "Washington to the People, 1795"},
    }
    path = "archive/1790/farewell.txt"
    text = head + body + FILLER + closing
    assert written(text, path, sources["frontmatter"], sources["metadata"]) == (
        "1796-09-17",
        "frontmatter date",
    )
    assert written(text, path, {}, sources["metadata"]) == (
        "1796-09-20",
        "metadata date '1796-09-20' (email Date header)",
    )
    assert written(text, path, {}, sources["title"]) == ("1795-07-01", "year in title '1795'")
    # The first line's year is made precise by the second line's full date of that year.
    assert written(text, path) == ("1796-09-19", "date in first lines 'September 19, 1796'")
    assert written(head + FILLER + closing, path) == ("1796-07-01", "year in first lines '1796'")
    assert written(body + FILLER + closing, path) == (
        "1796-09-19",
        "date in first lines 'September 19, 1796'",
    )
    assert written("Untitled\n\nx\n\ny\n\n" + body + FILLER + closing, path) == (
        "1796-09-19",
        "date in text 'September 19, 1796'",
    )
    assert written(FILLER + closing, path) == ("1797-09-17", "date in closing lines '17 September 1797'")
    assert written(FILLER, path) == ("1790-07-01", "year in path '1790'")
    assert written(FILLER, "notes/x.txt") == ("2026-11-01", "file modification time")


def test_a_year_in_the_head_beats_a_later_full_date_in_the_body():
    text = "George Washington, Farewell Address, 1796\n\nFriends and citizens.\n\nIn March 4, 1797 ..."
    assert written(text) == ("1796-07-01", "year in first lines '1796'")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("March 4, 1803", "1803-03-04"),
        ("4 March 1803", "1803-03-04"),
        ("4th of March\n\nOn 4th March, 1803 we left", "1803-03-04"),
        ("1803-03-04", "1803-03-04"),
        ("04-MAR-1803 15:02:20.00", "1803-03-04"),
        ("Mon, 04 Mar 1803 12:00:00 +0000", "1803-03-04"),
        ("The Battle of Hastings, 1066", "1066-07-01"),
        ("Letters from March 1803", "1803-03-01"),
        ("Speech (1863)", "1863-07-01"),
        ("In 1803 the purchase was made", "1803-07-01"),
        ("The Civil War, 1861\u20131865", "1861-07-01"),
        ("Hastings, 1066 AD", "1066-07-01"),
        ("1796", "1796-07-01"),
    ],
)
def test_dates_and_years_from_1000_on(text, expected):
    assert written(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "1500 people gathered outside",
        "Meet in room 1850",
        "The fare was $1,200",
        "Paid $1850 upfront",
        "The road is 1850 km long",
        "No. 1234",
        "Invoice 1999",
        "Total: 1500",
        "Price USD 1500.",
        "It rose 1850% in a day",
        "A 1500 page novel",
        "of 1500 men",
        "Caesar crossed in 49 BC, Hannibal 1218 BC",
        "pkg (1:2019.1-1) unstable; urgency=medium",
        "(Closes: #1108074, CVE-2023-40403)",
        "  - fix CVE-2013-0340: protect against billion laughs attacks",
        "See [upstream MR !1977][0].",
        "Set the value to 1850.5 today",
        "Flight 1066 to Paris",
        "Ordered 1999 units",
        "the year 2099",  # after today
        "0999-12-31 and 31 December 0999",  # before the year 1000
    ],
)
def test_numbers_that_are_not_years_do_not_date_a_document(text):
    assert written(text) == ("2026-11-01", "file modification time")


def test_a_year_this_year_is_never_in_the_future():
    assert written("Plans, 2026", mtime=datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC))[0] == "2026-07-01"
    today = datetime.date(2026, 3, 2)
    assert banding.band_for({}, "Plans, 2026", "x.txt", _ns(MTIME), False, today, 365, 1095)[
        "written_at"
    ] == ("2026-03-02")


@pytest.mark.parametrize(
    "value",
    [
        "2013-12-23T23:15:00+00:00",  # python-docx's template
        "1980-01-01T00:00:00",  # DOS/zip epoch
        "1970-01-01",  # Unix epoch
        "1601-01-01",  # Windows epoch
        "0999-05-01",  # before 1000
        "2026-11-10T09:00:00+00:00",  # after the file's mtime (2026-11-01)
        "2027-01-01",  # after today
        "not a date",
    ],
)
def test_metadata_dates_that_are_tool_defaults_or_impossible_are_ignored(value):
    assert written("nothing dated", metadata={"date": value, "date_source": "x"}) == (
        "2026-11-01",
        "file modification time",
    )


def test_a_metadata_date_a_day_after_the_mtime_is_kept_as_a_time_zone_slack():
    found = written("x", metadata={"date": "2026-11-02T01:00:00+09:00"})
    assert found == ("2026-11-02", "metadata date '2026-11-02' (format metadata)")


def test_a_title_that_is_only_the_file_name_is_path_evidence():
    assert written("x", "notes/1999.txt", metadata={"title": "1999"}) == ("1999-07-01", "year in path '1999'")
    assert written("x", "notes/a.txt", metadata={"title": "Report, 1999"}) == (
        "1999-07-01",
        "year in title '1999'",
    )


def test_long_first_lines_are_body_not_head():
    # A year at the end of a 300-character first paragraph does not read as a title.
    line = "word " * 60 + "in 1850"
    assert written(line + "\n\nnothing else")[1] == "file modification time"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (datetime.date(1803, 3, 4), "1803-03-04"),
        ("1803-03-04", "1803-03-04"),
        ("2001-01-01T12:00:00+00:00", "2001-01-01"),
        ("Mon, 01 Jan 2001 12:00:00 +0000", "2001-01-01"),
        ("March 4, 1803", "1803-03-04"),
        ("1796", "1796-07-01"),
        ("1796-09", "1796-09-01"),
        (1796, "1796-07-01"),
        ("0999-01-01", None),
        ("soon", None),
        (True, None),
    ],
)
def test_parse_date(value, expected):
    day = banding.parse_date(value, TODAY)
    assert (day.isoformat() if day else None) == expected


def test_frontmatter_date_before_1900_and_frontmatter_band():
    assert written("x", frontmatter={"date": "1848-02-21"}) == ("1848-02-21", "frontmatter date")
    band = banding.band_for({"date": "1848-02-21", "band": "current"}, "", "x.md", 0, False, TODAY, 365, 1095)
    assert (band["band"], band["written_at"]) == ("current", "1848-02-21")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("archive/1848/letter.txt", ("1848-07-01", "year in path '1848'")),
        ("archive/1848-letter.txt", ("1848-07-01", "year in path '1848'")),
        ("letters/1803-03-04 to Madison.txt", ("1803-03-04", "date in path '1803-03-04'")),
        ("diary/2019/notes.txt", ("2019-07-01", "year in path '2019'")),
        ("tickets/ticket-1500.txt", ("2026-11-01", "file modification time")),
        ("scans/scan-1042.txt", ("2026-11-01", "file modification time")),
    ],
)
def test_years_in_paths_and_numbers_that_are_not(path, expected):
    assert written("nothing dated", path) == expected


def test_a_frontmatter_date_is_kept_even_in_the_future():
    assert written("x", frontmatter={"date": "2027-03-01"}) == ("2027-03-01", "frontmatter date")


# -- full dates in every common form, numeric order, precision, paths ---------------------------

#: 24 June 2025 (a Tuesday) as people write it.
FORMS = [
    "2025-06-24",
    "2025/06/24",
    "2025.06.24",
    "24 June 2025",
    "24th of June, 2025",
    "June 24th, 2025",
    "Tuesday 24 June 2025",
    "Tue, 24 Jun 2025",
    "Tuesday, June 24th, 2025",
    "24/06/2025",
    "24-06-2025",
    "24.06.2025",
    "06/24/2025",
]


@pytest.mark.parametrize("form", FORMS)
def test_each_full_date_form_is_read_wherever_dates_are_read(form):
    where = re.sub(r"^T\w+,? ", "", form)  # the date a weekday stands before
    assert written(form + "\n\n" + FILLER) == ("2025-06-24", f"date in first lines '{where}'")
    assert written("x", metadata={"title": "Journal " + form}) == ("2025-06-24", f"date in title '{where}'")
    assert written("Untitled\n\nx\n\ny\n\nWritten " + form + ".") == ("2025-06-24", f"date in text '{where}'")
    assert written(FILLER + "\n\n-- Robin, " + form) == ("2025-06-24", f"date in closing lines '{where}'")
    assert written("x", frontmatter={"date": form}) == ("2025-06-24", "frontmatter date")
    assert written("x", metadata={"date": form, "date_source": "x"}) == (
        "2025-06-24",
        "metadata date '2025-06-24' (x)",
    )
    assert banding.parse_date(form, TODAY) == datetime.date(2025, 6, 24)
    if "/" not in form:  # a form a file name can hold
        assert written("x", f"notes/{form} notes.md") == ("2025-06-24", f"date in path '{where}'")


@pytest.mark.parametrize(
    ("text", "dmy", "mdy"),
    [
        ("04/03/2025", "2025-03-04", "2025-04-03"),
        ("04-03-2025", "2025-03-04", "2025-04-03"),
        ("04.03.2025", "2025-03-04", "2025-04-03"),
        ("4/3/2025", "2025-03-04", "2025-04-03"),
        ("12/12/2025", "2025-12-12", "2025-12-12"),
        ("24/06/2025", "2025-06-24", "2025-06-24"),  # one number over 12: the day either way
        ("06/24/2025", "2025-06-24", "2025-06-24"),
        ("31/02/2025", "2025-07-01", "2025-07-01"),  # no such day: the year only
        ("24/25/2025", "2025-07-01", "2025-07-01"),  # two numbers over 12
    ],
)
def test_a_numeric_day_and_month_read_by_the_setting_where_ambiguous(text, dmy, mdy):
    def on(order, frontmatter=None, path="notes/x.txt", body=text):
        band = banding.band_for(
            frontmatter or {}, body, path, _ns(MTIME), False, TODAY, 365, 1095, None, order
        )
        return band["written_at"]

    assert (on("dmy"), on("mdy")) == (dmy, mdy)
    assert written(text)[0] == dmy  # 'dmy' is the default
    if dmy != "2025-07-01":
        assert (on("dmy", {"date": text}, body="x"), on("mdy", {"date": text}, body="x")) == (dmy, mdy)
        name = text.replace("/", "-") + " journal.md"
        assert (on("dmy", path=name, body="x"), on("mdy", path=name, body="x")) == (dmy, mdy)


def test_the_numeric_order_setting_must_be_dmy_or_mdy():
    with pytest.raises(ValueError, match="numeric_date_order"):
        banding.band_for({}, "04/03/2025", "x.txt", 0, False, TODAY, 365, 1095, None, "ymd")
    assert banding.numeric_order(" MDY ") == "mdy"


@pytest.mark.parametrize(
    "text",
    [
        "Patch 8.2.1909 fixes the crash",  # a version, not 8 February 1909
        "Release 2019.1.3 is out",
        "Build 1.24.06.2025.7",
        "Call 555-12-2019 after six",
    ],
)
def test_versions_and_codes_are_not_numeric_dates(text):
    assert written(text) == ("2026-11-01", "file modification time")


@pytest.mark.parametrize(
    ("text", "path", "frontmatter", "expected"),
    [
        # a year from a higher source, the full date of that year from a lower one
        ("Notes, 2025\n\n" + FILLER, "diary/2025-04-09.md", None, ("2025-04-09", "date in path '2025-04-09'")),
        ("x", "diary/2025-04-09.md", {"date": 2025}, ("2025-04-09", "date in path '2025-04-09'")),
        ("x", "diary/2025-04-09.md", {"date": "2025-04"}, ("2025-04-09", "date in path '2025-04-09'")),
        ("Notes, 2025\n\n" + FILLER + "\n\nSigned 3 May 2025.", "x.txt", None, ("2025-05-03", "date in closing lines '3 May 2025'")),
        # ... and a month from between them
        ("Letters from June 2025\n\n" + FILLER, "2025-06-24.md", None, ("2025-06-24", "date in path '2025-06-24'")),
        ("Notes, 2025\n\n" + FILLER, "2025-06/Tuesday.md", None, ("2025-06-01", "month in path '2025-06'")),
        # evidence that disagrees refines nothing
        ("Notes, 2024\n\n" + FILLER, "diary/2025-04-09.md", None, ("2024-07-01", "year in first lines '2024'")),
        ("Letters from June 2025\n\n" + FILLER, "2025-07-02.md", None, ("2025-06-01", "month in first lines 'June 2025'")),
        ("x", "diary/2025-04-09.md", {"date": "2025-05"}, ("2025-05-01", "frontmatter date")),
        # a full date keeps its place in the order, whatever comes lower
        ("24/06/2025\n\n" + FILLER, "diary/2025-04-09.md", None, ("2025-06-24", "date in first lines '24/06/2025'")),
    ],
)  # fmt: skip
def test_a_more_precise_date_lower_in_the_order_wins_where_it_agrees(text, path, frontmatter, expected):
    assert written(text, path, frontmatter) == expected


def test_the_modification_time_never_makes_a_year_precise():
    assert written("Plans, 2026\n\n" + FILLER) == ("2026-07-01", "year in first lines '2026'")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("2025/06/24.md", ("2025-06-24", "date in path '2025/06/24'")),
        ("diary/2025/06/24 notes.md", ("2025-06-24", "date in path '2025/06/24'")),
        ("2025/6/24th.txt", ("2025-06-24", "date in path '2025/6/24'")),
        ("2025-06/24.md", ("2025-06-24", "date in path '2025-06/24'")),
        ("2025_06/24-walk.md", ("2025-06-24", "date in path '2025_06/24'")),
        ("journal/2025/June/24.md", ("2025-06-24", "date in path '2025/June/24'")),
        ("journal/2025/06-June/24.md", ("2025-06-24", "date in path '2025/06-June/24'")),
        ("journal/June 2025/Tuesday 24.md", ("2025-06-24", "date in path 'June 2025/24'")),
        ("journal/2025/June 24th.md", ("2025-06-24", "date in path '2025/June 24th'")),
        ("2025/06/24/entry.md", ("2025-06-24", "date in path '2025/06/24'")),
        ("24-06-2025 journal.md", ("2025-06-24", "date in path '24-06-2025'")),
        ("journal/24.06.2025.md", ("2025-06-24", "date in path '24.06.2025'")),
        ("notes_24-06-2025.txt", ("2025-06-24", "date in path '24-06-2025'")),
        ("2025/2025-06-24 late.md", ("2025-06-24", "date in path '2025-06-24'")),
        ("scans/20250624.pdf", ("2025-06-24", "date in path '20250624'")),
        # a month without its day
        ("2025-06/Tuesday.md", ("2025-06-01", "month in path '2025-06'")),
        ("2025/06/notes.md", ("2025-06-01", "month in path '2025/06'")),
        ("2025/06/31.md", ("2025-06-01", "month in path '2025/06'")),  # no 31 June
        ("2025-06/Wednesday 24.md", ("2025-06-01", "month in path '2025-06'")),  # 24 June was a Tuesday
        ("journal/June 2025/notes.md", ("2025-06-01", "month in path 'June 2025'")),
        # a name between them ends the run
        ("projects/2025/misc/3.md", ("2025-07-01", "year in path '2025'")),
        ("2025/photos/06/24.md", ("2025-07-01", "year in path '2025'")),
        ("2025/12 best shots.md", ("2025-07-01", "year in path '2025'")),
        ("2027/06/24.md", ("2026-11-01", "file modification time")),  # after today
    ],
)
def test_a_date_read_across_folders_and_file_name(path, expected):
    assert written("nothing dated", path) == expected


@pytest.mark.parametrize(
    ("text", "title", "expected"),
    [
        ("x", None, ("2025-06-01", "month in path '2025-06'")),
        ("June 24th\n\n" + FILLER, None, ("2025-06-24", "date in first lines 'June 24th', year from month in path '2025-06'")),
        ("Tuesday 24 June\n\n" + FILLER, None, ("2025-06-24", "date in first lines 'Tuesday 24 June', year from month in path '2025-06'")),
        ("x", "Tue, 24th of June", ("2025-06-24", "date in title 'Tue, 24th of June', year from month in path '2025-06'")),
        # a day that is no Tuesday, a heading's weekday that is wrong, another month, a day in prose
        ("June 25th\n\n" + FILLER, None, ("2025-06-01", "month in path '2025-06'")),
        ("Monday 24 June\n\n" + FILLER, None, ("2025-06-01", "month in path '2025-06'")),
        ("July 1st\n\n" + FILLER, None, ("2025-06-01", "month in path '2025-06'")),
        ("We met on June 24th at noon.\n\n" + FILLER, None, ("2025-06-01", "month in path '2025-06'")),
    ],
)  # fmt: skip
def test_a_weekday_in_a_month_folder_keeps_the_month_unless_something_gives_the_day(text, title, expected):
    metadata = {"title": title} if title else None
    assert written(text, "diary/2025-06/Tuesday.md", metadata=metadata) == expected


def test_a_heading_day_and_month_takes_its_year_from_other_evidence_only():
    assert written("June 24th\n\n" + FILLER) == ("2026-11-01", "file modification time")
    assert written("June 24th\n\nNotes of the year, 2025") == (
        "2025-06-24",
        "date in first lines 'June 24th', year from year in first lines '2025'",
    )
    assert written("June 24th\n\n" + FILLER, "diary/2025/x.md") == (
        "2025-06-24",
        "date in first lines 'June 24th', year from year in path '2025'",
    )


@pytest.mark.parametrize(
    "text",
    [
        "1" + " " * 100_000 + "x",
        "1 of" * 50_000,
        "24/" * 50_000,
        "2025/" * 40_000,
        "24." * 50_000 + "2025",
        "Tuesday, " * 20_000 + "24",
        "June " * 40_000 + "2025x",
    ],
)
def test_date_reading_is_linear_on_long_adversarial_text(text):
    began = time.perf_counter()
    banding.full_dates(text, TODAY)
    banding.band_for(
        {}, text, text[:5000] + ".md", _ns(MTIME), False, TODAY, 365, 1095, {"title": text[:5000]}
    )
    assert time.perf_counter() - began < 2
