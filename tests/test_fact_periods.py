"""plpy/fact_periods.py as plain Python: when a declared fact's value says it held."""

import datetime

import fact_periods
import pytest

TODAY = datetime.date(2026, 11, 29)
D = datetime.date


def period(value, **kwargs):
    found = fact_periods.stated_period(value, TODAY, **kwargs)
    return found and (found["valid_from"], found["valid_to"])


@pytest.mark.parametrize(
    ("value", "valid_from"),
    [
        ("27 Alder Row, Larkhaven (since 15 August 2020; rented from Hale Lettings)", D(2020, 8, 15)),
        ("Senior Database Administrator since 1 June 2022; joined as DBA on 7 March 2016", D(2022, 6, 1)),
        ("since 2020-08-15", D(2020, 8, 15)),
        ("since 15 August 2020", D(2020, 8, 15)),
        ("since the 15th of August, 2020", D(2020, 8, 15)),
        ("since August 15, 2020", D(2020, 8, 15)),
        ("Since Aug 15th 2020", D(2020, 8, 15)),
        ("member since March 2019", D(2019, 3, 1)),
        ("since Aug. 2020", D(2020, 8, 1)),
        ("since 2020-08", D(2020, 8, 1)),
        ("since 08/2020", D(2020, 8, 1)),
        ("since 2011", D(2011, 1, 1)),
        ("ever since 1803", D(1803, 1, 1)),
        ("Acme (2016 to present)", D(2016, 1, 1)),
        ("from March 2016 - now", D(2016, 3, 1)),
        ("Acme, 2016\u2013today", D(2016, 1, 1)),
        ("Acme, 2016 to date", D(2016, 1, 1)),
    ],
)
def test_a_start_makes_a_value_valid_from_its_first_day(value, valid_from):
    assert period(value) == (valid_from, None)


@pytest.mark.parametrize(
    ("value", "valid_from", "valid_to"),
    [
        ("April 2013 to August 2020", D(2013, 4, 1), D(2020, 9, 1)),
        ("shared flat, Mill Lane (2011 to April 2013)", D(2011, 1, 1), D(2013, 5, 1)),
        ("Copperleaf (2012\u20132016)", D(2012, 1, 1), D(2017, 1, 1)),
        ("Copperleaf 2012-2016", D(2012, 1, 1), D(2017, 1, 1)),
        ("Copperleaf 2012 \u2014 2016", D(2012, 1, 1), D(2017, 1, 1)),
        ("from March 2016 until June 2022", D(2016, 3, 1), D(2022, 7, 1)),
        ("from 2016 till 2018", D(2016, 1, 1), D(2019, 1, 1)),
        ("Dec 2019 through Feb 2020", D(2019, 12, 1), D(2020, 3, 1)),
        ("2013-04-01 to 2020-08-15", D(2013, 4, 1), D(2020, 8, 16)),
        ("15 August 2020 to 31 December 2020", D(2020, 8, 15), D(2021, 1, 1)),
        ("August 15, 2020 - January 3, 2021", D(2020, 8, 15), D(2021, 1, 4)),
        ("2013-04 to 2020-08", D(2013, 4, 1), D(2020, 9, 1)),
        ("1 March 2016 to 2018", D(2016, 3, 1), D(2019, 1, 1)),
        ("2019 to 2019", D(2019, 1, 1), D(2020, 1, 1)),
        ("(February 2012 to March 2016), Hollowmere then Larkhaven office", D(2012, 2, 1), D(2016, 4, 1)),
    ],
)
def test_a_closed_range_runs_to_the_end_of_its_last_period(value, valid_from, valid_to):
    assert period(value) == (valid_from, valid_to)


def test_a_numeric_date_is_read_in_the_order_given():
    assert period("since 02/03/2014") == (D(2014, 3, 2), None)
    assert period("since 02/03/2014", numeric_order="mdy") == (D(2014, 2, 3), None)


@pytest.mark.parametrize(
    "value",
    [
        "14 July 1988, Cindermoor",  # born: content
        "Pixel, terrier mix, adopted 13 March 2021 from Larkhaven Animal Shelter",
        "2014 Halvard Tern hatchback, registration XX-000-XX, bought May 2018",
        "pixelbox (hallway cupboard). Replaced shoebox in July 2021.",
        "moved from Leeds in 2013 to Larkhaven in 2020",  # two dates, no range between them
        "since June",  # no year: nothing to read against a document's date
        "since the 1990s",  # a decade is too vague to start a fact
        "since then",
        "Acme (2020 to 2013)",  # a range that runs backwards
        "+44 20 7946 0000",
        "policy POL-000-1234",
        "9 to 5 on weekdays",
        "",
    ],
)
def test_other_dates_are_content_not_validity(value):
    assert period(value) is None


def test_the_first_start_or_range_of_a_value_is_its_period():
    assert period("27 Alder Row (since 2020); before that 14 Fenwick Street (2013 to 2020)") == (
        D(2020, 1, 1),
        None,
    )
    assert period("born 1988; at Acme 2012 to 2016; since 2017 at Beta") == (D(2012, 1, 1), D(2017, 1, 1))


def test_the_period_names_its_words_in_the_value():
    value = "Payments (from March 2016 until June 2022)"
    found = fact_periods.stated_period(value, TODAY)
    assert value[found["start"] : found["end"]] == "from March 2016 until June 2022"
    value = "27 Alder Row (since 15 August 2020)"
    found = fact_periods.stated_period(value, TODAY)
    assert value[found["start"] : found["end"]] == "since 15 August 2020"


@pytest.mark.parametrize(
    ("attribute", "line"),
    [
        ("previous_addresses", "address"),
        ("previous_address", "address"),
        ("former_employers", "employer"),
        ("past_companies", "company"),
        ("previous_boxes", "box"),
        ("former_churches", "church"),
        ("previous_houses", "house"),
        ("previous_status", "status"),
        ("previous_home_towns", "home_town"),
        ("address", None),
        ("previous", None),
        ("previously_known_as", None),
    ],
)
def test_a_previous_attribute_names_its_line_in_the_singular(attribute, line):
    assert fact_periods.history_line(attribute) == line


def test_the_items_of_a_previous_list_with_a_range_are_its_history():
    value = (
        "14 Fenwick Street, Flat 3, Larkhaven (April 2013 to August 2020); "
        "shared flat, Mill Lane, Hollowmere (2011 to April 2013); a tent somewhere"
    )
    assert fact_periods.history_items(value, TODAY) == [
        ("14 Fenwick Street, Flat 3, Larkhaven", D(2013, 4, 1), D(2020, 9, 1)),
        ("shared flat, Mill Lane, Hollowmere", D(2011, 1, 1), D(2013, 5, 1)),
    ]


@pytest.mark.parametrize(
    ("value", "items"),
    [
        # ", " separates only where every item has a range of its own
        (
            "Copperleaf Analytics (February 2012 to March 2016), Hollowmere then Larkhaven office",
            [("Copperleaf Analytics, Hollowmere then Larkhaven office", D(2012, 2, 1), D(2016, 4, 1))],
        ),
        (
            "Initech (2009 to 2011), Globex (2011-2012)",  # a frontmatter list, joined with ", "
            [("Initech", D(2009, 1, 1), D(2012, 1, 1)), ("Globex", D(2011, 1, 1), D(2013, 1, 1))],
        ),
        # a range outside parentheses, with "from", or before the value
        (
            "Acme Ltd, 2012 to 2016; Beta from March 2016 until June 2022; 2022\u20132023: Gamma",
            [
                ("Acme Ltd", D(2012, 1, 1), D(2017, 1, 1)),
                ("Beta", D(2016, 3, 1), D(2022, 7, 1)),
                ("Gamma", D(2022, 1, 1), D(2024, 1, 1)),
            ],
        ),
        # what else the parentheses hold stays; a ";" inside them separates nothing
        (
            "Mill Lane (2011 to 2013; shared with Tom)",
            [("Mill Lane (shared with Tom)", D(2011, 1, 1), D(2014, 1, 1))],
        ),
        # no history: an item that is still valid, one without a range, one that is only a range
        ("Acme (since 2016); Beta; 2010 to 2012", []),
        ("", []),
    ],
)
def test_history_items(value, items):
    assert fact_periods.history_items(value, TODAY) == items


def test_the_rows_of_a_documents_facts():
    rows = fact_periods.fact_periods(
        ["address", "born", "previous_addresses", "team"],
        [
            "27 Alder Row (since 15 August 2020)",
            "14 July 1988",
            "14 Fenwick Street (April 2013 to August 2020); Mill Lane",
            "Payments (2016 to 2022)",
        ],
        TODAY,
    )
    assert [(r["n"], r["attribute"], r["value"], r["valid_from"], r["valid_to"]) for r in rows] == [
        (1, "address", "27 Alder Row (since 15 August 2020)", D(2020, 8, 15), None),
        (2, "born", "14 July 1988", None, None),
        # the list itself stays as declared, from the document's date; its dated item is history
        (3, "previous_addresses", "14 Fenwick Street (April 2013 to August 2020); Mill Lane", None, None),
        (3, "address", "14 Fenwick Street", D(2013, 4, 1), D(2020, 9, 1)),
        (4, "team", "Payments (2016 to 2022)", D(2016, 1, 1), D(2023, 1, 1)),
    ]
    with pytest.raises(ValueError, match="numeric_order"):
        fact_periods.fact_periods([], [], TODAY, "ymd")
