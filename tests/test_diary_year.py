"""The diary-year generator of bench/diary_year.py (no database)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from bench import diary_year
from bench.diary_year import ALL_FORMS, WHERES, fold, generate


@pytest.fixture(scope="module")
def diary() -> diary_year.Diary:
    return generate(seed=29)


def test_the_same_seed_gives_the_same_diary(diary):
    again = generate(seed=29)
    assert [(n.path, n.text) for n in again.notes] == [(n.path, n.text) for n in diary.notes]
    assert again.questions == diary.questions
    other = generate(seed=30)
    assert [n.text for n in other.notes] != [n.text for n in diary.notes]


def test_a_year_of_notes_one_a_day_with_distinct_paths(diary):
    assert len(diary.notes) == 365
    assert len({n.day for n in diary.notes}) == 365
    assert len({n.path for n in diary.notes}) == 365
    assert len(diary.questions) == 120
    assert not diary.shortfall


def test_every_expected_string_is_in_exactly_its_source_note(diary):
    folded = {n.path: fold(n.text) for n in diary.notes}
    for q in diary.questions:
        holders = [path for path, text in folded.items() if fold(q.expect) in text]
        assert holders == [q.source], (q.question, q.expect, holders)


def test_each_day_is_asked_about_once_and_relative_questions_have_a_day(diary):
    by_source = Counter(q.source for q in diary.questions)
    assert max(by_source.values()) == 1
    for q in diary.questions:
        assert (q.as_of is not None) == q.kind.startswith("relative/"), q


def test_every_date_form_and_both_places_of_the_date_occur(diary):
    kinds = Counter(q.kind for q in diary.questions)
    assert {k.split("/")[0] for k in kinds} == set(ALL_FORMS)
    assert {k.split("/")[1] for k in kinds} == set(WHERES)
    for form in diary_year.FORMS:
        for where in WHERES:
            assert kinds[f"{form}/{where}"] > 0, (form, where)


def test_where_the_date_is_matches_the_note(diary):
    by_path = {n.path: n for n in diary.notes}
    for q in diary.questions:
        note = by_path[q.source]
        assert q.kind.endswith("/" + note.where)
    for n in diary.notes:
        body = n.text.split("---\n", 2)[-1] if n.frontmatter else n.text
        named = re.search(rf"\b({'|'.join(diary_year.MONTH_NAMES + diary_year.WEEKDAYS)})\b", body)
        if n.where == "meta_only":
            assert not named and str(n.day.year) not in body, n.path
        else:
            assert named or str(n.day.year) in body, n.path


def test_notes_with_and_without_frontmatter_and_every_file_name_style(diary):
    with_frontmatter = sum(n.frontmatter for n in diary.notes)
    assert 0.55 < with_frontmatter / len(diary.notes) < 0.8
    assert all(n.text.startswith("---\n") == n.frontmatter for n in diary.notes)
    paths = [n.path for n in diary.notes]
    assert any(p.count("/") == 2 for p in paths)  # 2025/06/24.md
    assert any(p.endswith(" journal.md") for p in paths)  # 24-06-2025 journal.md
    assert any(p.split("/")[-1][:-3] in diary_year.WEEKDAYS for p in paths)  # 2025-06/Tuesday.md
    assert any(len(p) == len("2025-06-24.md") and "/" not in p for p in paths)


def test_a_smaller_run(tmp_path):
    small = generate(seed=3, days=60, questions=30)
    assert len(small.notes) == 60
    assert len(small.questions) <= 30
    vault = diary_year.write(small, tmp_path)
    assert len(list(vault.rglob("*.md"))) == 60
    assert len((tmp_path / "questions.jsonl").read_text().splitlines()) == len(small.questions)
