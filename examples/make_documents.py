"""Generate the non-Markdown part of the example vault (PDF, DOCX, EML).

Everything here is synthetic. The output is deterministic: every date and
metadata field is fixed, and the DOCX zip entries get fixed timestamps, so
re-running the script produces the same bytes as far as the libraries allow
(a different fpdf2 or zlib version may still change the encoding).

Usage (from the repository root):

    .venv/bin/python examples/make_documents.py

Needs only the standard library, fpdf2 and python-docx.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from email.message import EmailMessage
from email.policy import default as EMAIL_POLICY
from pathlib import Path

import docx
from docx.shared import Pt
from fpdf import FPDF, FontFace

VAULT = Path(__file__).resolve().parent / "vault"
PRODUCER = "exocortex examples/make_documents.py"


# --------------------------------------------------------------------- PDF


class Report(FPDF):
    """A plain A4 document with a running footer."""

    def __init__(self, footer_text: str):
        super().__init__(orientation="P", unit="mm", format="A4")
        self.footer_text = footer_text
        self.set_margins(20, 20, 20)
        self.set_auto_page_break(auto=True, margin=20)

    def footer(self) -> None:
        self.set_y(-14)
        self.set_font("Helvetica", "", 8)
        self.cell(0, 5, f"{self.footer_text} - page {self.page_no()}", align="C")


def new_pdf(title: str, author: str, subject: str, created: dt.datetime, footer: str) -> Report:
    pdf = Report(footer)
    pdf.set_title(title)
    pdf.set_author(author)
    pdf.set_subject(subject)
    pdf.set_keywords("synthetic example exocortex")
    pdf.set_creator(PRODUCER)
    pdf.set_producer(PRODUCER)
    pdf.set_creation_date(created)
    pdf.set_lang("en")
    return pdf


def h1(pdf: FPDF, text: str) -> None:
    pdf.set_font("Helvetica", "B", 15)
    pdf.multi_cell(0, 8, text, align="L", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)


def h2(pdf: FPDF, text: str) -> None:
    pdf.ln(2)
    pdf.set_font("Helvetica", "B", 11)
    pdf.multi_cell(0, 6, text, align="L", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(1)


def para(pdf: FPDF, text: str, size: int = 10) -> None:
    pdf.set_font("Helvetica", "", size)
    pdf.multi_cell(0, 5, " ".join(text.split()), align="L", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(1.5)


def bullets(pdf: FPDF, items: list[str]) -> None:
    pdf.set_font("Helvetica", "", 10)
    for item in items:
        pdf.multi_cell(0, 5, "- " + " ".join(item.split()), align="L", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(1.5)


def rows(pdf: FPDF, pairs: list[tuple[str, str]], key_w: float = 55) -> None:
    """A two-column key/value table; long values wrap inside their cell."""
    pdf.set_font("Helvetica", "", 10)
    value_w = pdf.epw - key_w
    with pdf.table(
        col_widths=(key_w, value_w),
        first_row_as_headings=False,
        text_align="LEFT",
        line_height=6,
    ) as table:
        for key, value in pairs:
            row = table.row()
            row.cell(key, style=FontFace(emphasis="BOLD"))
            row.cell(value)
    pdf.ln(2)


def car_insurance_pdf() -> None:
    pdf = new_pdf(
        "Motor Policy Summary POL-000-1234 (renewal 2019)",
        "Meridale Mutual (fictional insurer)",
        "Car insurance policy summary for Sam Rivera, 2019-2020",
        dt.datetime(2019, 4, 26, 9, 30, tzinfo=dt.UTC),
        "Meridale Mutual - Motor Policy POL-000-1234 - synthetic example document",
    )
    pdf.add_page()
    h1(pdf, "Meridale Mutual - Motor Insurance Policy Summary")
    para(
        pdf,
        """This summary accompanies your renewal documents. It sets out the main
        features of your cover for the period shown below. Please read it together
        with the full policy wording and your certificate of motor insurance, and
        tell us straight away if anything shown here is incorrect.""",
    )
    h2(pdf, "Policy schedule")
    rows(
        pdf,
        [
            ("Policy number", "POL-000-1234"),
            ("Policyholder", "Sam Rivera"),
            ("Address", "14 Fenwick Street, Flat 3, Larkhaven, LH1 0ZZ"),
            ("Period of cover", "19 May 2019 to 18 May 2020 (both dates inclusive)"),
            ("Vehicle", "2014 Halvard Tern 1.4, 5-door hatchback, dark green"),
            ("Registration", "XX-000-XX"),
            ("Cover", "Comprehensive"),
            ("Use", "Social, domestic and pleasure, including commuting"),
            ("Named drivers", "Sam Rivera (policyholder) only"),
            ("Annual mileage", "up to 10,000 km"),
            ("Overnight parking", "Residents' bay, Chandler's Lane, Larkhaven"),
            ("No-claims bonus", "1 year (protected: no)"),
            ("Excess", "Compulsory EUR 150 + voluntary EUR 250 = EUR 400"),
            ("Annual premium", "EUR 452.00 (previous year EUR 486.00)"),
            ("Payment", "Annually by card, paid 26 April 2019"),
        ],
    )
    para(
        pdf,
        """Your premium has gone down this year because you have earned one year of
        no-claims bonus and your declared annual mileage is lower than last year.
        If your circumstances change during the period of cover (for example you
        move house, change your job, add a driver or modify the vehicle) you must
        tell us, because it may affect your premium or whether we can pay a claim.""",
    )

    pdf.add_page()
    h2(pdf, "What is covered")
    bullets(
        pdf,
        [
            "Accidental damage to your vehicle, including vandalism, up to its market value at the time of the loss.",
            "Fire and theft of the vehicle, and damage caused during an attempted theft.",
            "Third-party liability for injury to other people, unlimited, and damage to their property up to EUR 20,000,000.",
            "Windscreen and window glass: repair with no excess; replacement with an excess of EUR 75. Glass claims do not affect your no-claims bonus.",
            "Personal belongings in the vehicle up to EUR 250, and new child car seats after an accident.",
            "A courtesy car while your vehicle is repaired by one of our approved repairers.",
        ],
    )
    h2(pdf, "What is not covered")
    bullets(
        pdf,
        [
            "The excess shown in the schedule.",
            "Wear and tear, mechanical, electrical or computer failure, and tyre damage caused by braking, punctures or cuts.",
            "Loss or damage while the vehicle is driven by anyone not named on the certificate, or used for hire, reward or racing.",
            "Theft when the keys were left in or on the vehicle, or the vehicle was left unlocked.",
            "Loss of value after a repair.",
        ],
    )
    h2(pdf, "Making a claim")
    para(
        pdf,
        """Call the claims line, available 24 hours a day, as soon as possible after
        an incident and in any case within 7 days. Have your policy number
        (POL-000-1234), the registration (XX-000-XX) and details of any other
        people or vehicles involved ready. Do not admit liability or offer payment
        to anyone. If the vehicle cannot be driven, we will arrange recovery to an
        approved repairer.""",
    )
    h2(pdf, "Cancellation and complaints")
    para(
        pdf,
        """You may cancel within 14 days of receiving these documents and receive a
        full refund of the premium if no claim has been made. After that, a
        pro-rata refund applies, less an administration charge of EUR 30. If you
        are unhappy with our service, contact our customer relations team first;
        if we cannot resolve your complaint within eight weeks, you may refer it to
        the insurance ombudsman. This document is a fictional example produced for
        software testing; Meridale Mutual is not a real company.""",
    )
    pdf.output(str(VAULT / "admin" / "2019-car-insurance.pdf"))


def tax_return_pdf() -> None:
    pdf = new_pdf(
        "Self-assessment summary, tax year 2024-25",
        "Larkhaven Revenue Office (fictional)",
        "Tax return summary for Sam Rivera, 2024-25",
        dt.datetime(2025, 5, 14, 18, 42, tzinfo=dt.UTC),
        "Tax return summary 2024-25 - confirmation TX-000-7763 - synthetic example document",
    )
    pdf.add_page()
    h1(pdf, "Self-assessment tax return - summary of your return, 2024-25")
    para(
        pdf,
        """Thank you. Your online return for the tax year 6 April 2024 to 5 April 2025
        has been received and processed. Keep this summary with your records for at
        least six years. It shows the figures you entered and our calculation based
        on them. It is not a demand for payment.""",
    )
    rows(
        pdf,
        [
            ("Taxpayer", "Sam Rivera"),
            ("Address", "27 Alder Row, Larkhaven, LH4 0ZZ"),
            ("Unique taxpayer ref.", "00000 00000"),
            ("Date filed", "14 May 2025, 18:42"),
            ("Confirmation", "TX-000-7763"),
        ],
        key_w=50,
    )
    h2(pdf, "Income")
    rows(
        pdf,
        [
            (
                "Employment (Northwind Labs)",
                "Salary EUR 81,000.00; on-call allowance EUR 2,400.00; bonus EUR 3,000.00",
            ),
            ("Total employment income", "EUR 86,400.00"),
            (
                "Self-employment (writing)",
                "Turnover EUR 550.00; trading allowance claimed EUR 550.00; taxable profit EUR 0.00",
            ),
            ("Savings interest", "EUR 412.00 (within personal savings allowance)"),
        ],
        key_w=65,
    )
    h2(pdf, "Calculation")
    rows(
        pdf,
        [
            ("Income tax due on total income", "EUR 21,870.00"),
            ("Tax deducted by employer (PAYE)", "EUR 21,870.00"),
            ("Balance due / repayment", "EUR 0.00"),
            ("Payments on account 2025-26", "Not required"),
        ],
        key_w=65,
    )
    para(
        pdf,
        """Your writing income is covered in full by the trading allowance, so no
        separate expenses have been deducted and no Class 2 or Class 4 contributions
        are due. Because all the tax due was collected through your tax code, you do
        not need to make any payment and you will not receive a repayment. If any of
        these figures are wrong you can amend your return online up to 12 months
        after the filing deadline. This is a fictional document made for testing.""",
    )
    pdf.output(str(VAULT / "admin" / "2024-tax-return-summary.pdf"))


def upgrade_report_pdf() -> None:
    pdf = new_pdf(
        "PostgreSQL 12 to 16 upgrade - final report",
        "Sam Rivera, Northwind Labs Data Platform",
        "Report on the May 2023 production upgrade",
        dt.datetime(2023, 5, 26, 14, 0, tzinfo=dt.UTC),
        "Northwind Labs - Data Platform - PG16 upgrade report - internal (synthetic example)",
    )
    pdf.add_page()
    h1(pdf, "PostgreSQL 12 to 16 upgrade: final report")
    rows(
        pdf,
        [
            ("Author", "Sam Rivera, Senior Database Administrator"),
            ("Reviewed by", "Iris Calder, Database Administrator"),
            ("For", "Tomas Okafor, Engineering Manager; CTO"),
            ("Window", "Saturday 20 May and Sunday 21 May 2023"),
            ("Date of report", "26 May 2023"),
        ],
        key_w=40,
    )
    h2(pdf, "Summary")
    para(
        pdf,
        """All four production PostgreSQL clusters were upgraded from version 12 to
        version 16 over the weekend of 20-21 May 2023, six months before the end of
        community support for version 12. We used pg_upgrade in link mode on each
        primary and rebuilt the replicas from the upgraded primaries. Every cluster
        came back within its promised read-only window; the longest was the orders
        cluster (db-prod-02) at 38 minutes against a promise of 46. No data was
        lost and no rollback was needed. The procedure followed the runbook
        rehearsed three times on staging between February and April.""",
    )
    h2(pdf, "Results by cluster")
    pdf.set_font("Helvetica", "B", 9)
    widths = (30, 40, 25, 25, 50)
    header = ("Cluster", "Role", "Size", "Read-only", "Notes")
    for w, text in zip(widths, header, strict=True):
        pdf.cell(w, 6, text, border=1)
    pdf.ln(6)
    pdf.set_font("Helvetica", "", 9)
    table = [
        ("db-prod-04", "analytics feed", "0.9 TB", "31 min", "Sat 20 May, first"),
        ("db-prod-02", "orders", "3.1 TB", "38 min", "Sat; stats issue, below"),
        ("db-prod-01", "customers", "1.2 TB", "24 min", "Sun 21 May"),
        ("db-prod-03", "billing", "0.7 TB", "27 min", "Sun; last"),
    ]
    for row in table:
        for w, text in zip(widths, row, strict=True):
            pdf.cell(w, 6, text, border=1)
        pdf.ln(6)
    pdf.ln(2)
    para(
        pdf,
        """Read-only time is measured from the application switch to read-only mode
        until writes were re-enabled. Replica rebuilds ran afterwards and did not
        affect availability; the slowest, for db-prod-02, took 3 hours 10 minutes.""",
    )

    pdf.add_page()
    h2(pdf, "What went wrong")
    para(
        pdf,
        """After db-prod-02 was upgraded, the statistics-rebuild step (vacuumdb
        --all --analyze-in-stages) was skipped by mistake. pg_upgrade does not carry
        planner statistics over, so for about twenty minutes the planner worked
        without them and a reporting query that normally runs in 2 seconds took
        just over 4 minutes. Iris Calder noticed the slow query in monitoring within
        ninety seconds of writes being re-enabled; running the analyze step fixed
        it. The runbook now marks this step in bold and the validation script
        refuses to finish until pg_stats has rows for the key tables.""",
    )
    h2(pdf, "What went well")
    bullets(
        pdf,
        [
            "pg_upgrade --check had been run against every live cluster a week earlier, so there were no surprises from extensions or data types.",
            "Link mode kept the upgrade step itself under four minutes even for the 3.1 TB cluster.",
            "Iris Calder's validation script (row counts on 40 key tables, sequence values, extension versions) caught nothing, which is what we wanted.",
            "The business was told about the read-only windows two weeks ahead; there were no complaints.",
        ],
    )
    h2(pdf, "Follow-up actions")
    bullets(
        pdf,
        [
            "Delete the old version 12 data directories after seven days (done 28 May 2023).",
            "Re-enable pg_stat_statements sampling and compare top queries with the April baseline.",
            "Review autovacuum settings for version 16 behaviour and update the vacuum runbook.",
            "Use this upgrade as the baseline for the Atlas consolidation, so that Atlas is not also a major-version upgrade.",
        ],
    )
    para(
        pdf,
        """Thanks to Iris Calder for the replica work and validation, to Tomas
        Okafor for running the bridge call, and to the on-call team for covering
        the rest of the weekend. This report describes a fictional company and is
        part of a synthetic example corpus.""",
    )
    pdf.output(str(VAULT / "work" / "2023-pg16-upgrade-report.pdf"))


# -------------------------------------------------------------------- DOCX

DOCX_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


def set_core(
    document: docx.document.Document, title: str, author: str, when: dt.datetime, subject: str
) -> None:
    cp = document.core_properties
    cp.title = title
    cp.author = author
    cp.last_modified_by = author
    cp.subject = subject
    cp.keywords = "synthetic example exocortex"
    cp.comments = "Synthetic example document generated by examples/make_documents.py"
    cp.category = ""
    cp.content_status = ""
    cp.identifier = ""
    cp.language = "en-GB"
    cp.version = ""
    cp.created = when
    cp.modified = when
    cp.last_printed = when
    cp.revision = 1


def save_docx(document: docx.document.Document, path: Path) -> None:
    """Save with fixed zip timestamps so the file is reproducible."""
    buffer = io.BytesIO()
    document.save(buffer)
    buffer.seek(0)
    out = io.BytesIO()
    with zipfile.ZipFile(buffer) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=DOCX_ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.create_system = 3
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, src.read(info.filename))
    path.write_bytes(out.getvalue())


def atlas_proposal_docx() -> None:
    d = docx.Document()
    set_core(
        d,
        "Atlas: consolidating the production database clusters",
        "Sam Rivera",
        dt.datetime(2022, 9, 30, 16, 0, 0),
        "Project proposal, Northwind Labs Data Platform",
    )
    d.styles["Normal"].font.size = Pt(11)
    d.add_heading("Atlas: consolidating the production database clusters", level=0)
    d.add_paragraph(
        "Project proposal. Author: Sam Rivera (Senior DBA, Atlas lead). Reviewers: Iris Calder (DBA), "
        "Tomas Okafor (Engineering Manager). Version 1.0, 30 September 2022. Northwind Labs, Data Platform team."
    )

    d.add_heading("1. Summary", level=1)
    d.add_paragraph(
        "Northwind Labs runs four production PostgreSQL clusters (db-prod-01 to db-prod-04) that were built "
        "separately over eight years. Each has its own backup scripts, failover procedure and monitoring. This "
        "proposal is to move all four onto one managed platform with a single pattern for high availability, "
        "backups, monitoring and upgrades, over roughly two and a half years, finishing by early 2026."
    )
    d.add_paragraph(
        "The logical databases stay separate. What converges is how we operate them. The main benefit is fewer "
        "on-call hours and faster, safer recovery; the main cost is a higher monthly platform bill."
    )

    d.add_heading("2. Current state", level=1)
    d.add_paragraph(
        "All four clusters run PostgreSQL 12, which reaches end of community support in November 2024. Failover "
        "is manual and documented in the replication runbook. Backups are nightly base backups plus WAL archiving, "
        "with restore drills done by hand a few times a year. In the last twelve months the team recorded 212 "
        "on-call hours, of which we estimate 120 came from differences between the clusters rather than from "
        "real problems."
    )

    d.add_heading("3. Proposal", level=1)
    d.add_paragraph("The target platform has the same shape for every cluster:", style="Normal")
    for item in (
        "three nodes per cluster, with automatic failover managed by Patroni;",
        "continuous backups with pgBackRest to object storage, and point-in-time recovery tested weekly;",
        "one monitoring and alerting configuration, including replication-slot and transaction-age alerts;",
        "one upgrade procedure, rehearsed on a staging copy of every cluster.",
    ):
        d.add_paragraph(item, style="List Bullet")

    d.add_heading("4. Phases", level=1)
    table = d.add_table(rows=1, cols=4)
    table.style = "Table Grid"
    head = table.rows[0].cells
    for cell, text in zip(head, ("Phase", "Scope", "Target", "Risk"), strict=True):
        cell.text = text
    for row in (
        ("0", "Upgrade all clusters from PostgreSQL 12 to 16 in place", "Q2 2023", "Medium"),
        ("1", "Build the platform; migrate db-prod-04 (analytics feed)", "Q4 2024", "Low"),
        ("2", "Migrate db-prod-01 (customers)", "Q2 2025", "Medium"),
        ("3", "Migrate db-prod-02 (orders, about 4 TB)", "Q2 2025", "High"),
        ("4", "Migrate db-prod-03 (billing); decommission old hosts", "Q4 2025 to Q1 2026", "High"),
    ):
        cells = table.add_row().cells
        for cell, text in zip(cells, row, strict=True):
            cell.text = text

    d.add_heading("5. Migration method", level=1)
    d.add_paragraph(
        "For each cluster we prefer logical replication from the old primary to the new platform, so that the "
        "cut-over is a short switch of writes rather than a long outage. Iris Calder will run a proof of concept "
        "on db-prod-03 to test the method on the ugliest schema first. Every replication slot created for the "
        "project must have an owner and a ticket, and be dropped when its subscriber is removed. Sequences are "
        "not replicated and must be advanced at cut-over."
    )

    d.add_heading("6. Costs", level=1)
    costs = d.add_table(rows=1, cols=3)
    costs.style = "Table Grid"
    for cell, text in zip(
        costs.rows[0].cells, ("Item", "Today (per month)", "Atlas (per month)"), strict=True
    ):
        cell.text = text
    for row in (
        ("Hardware and hosting", "EUR 9,800", "EUR 12,400"),
        ("Backup storage", "EUR 600", "EUR 1,100"),
        ("On-call hours (estimated, at internal rate)", "EUR 3,500", "EUR 1,500"),
        ("Total", "EUR 13,900", "EUR 15,000"),
    ):
        cells = costs.add_row().cells
        for cell, text in zip(cells, row, strict=True):
            cell.text = text

    d.add_heading("7. Risks", level=1)
    for item in (
        "Big-bang temptation: never move two clusters in the same weekend.",
        "Billing month-end close: no changes to db-prod-03 in the last three working days of a month.",
        "Forgotten replication slots filling the WAL volume on a primary.",
        "Budget overrun on storage for the orders cluster.",
    ):
        d.add_paragraph(item, style="List Number")

    d.add_heading("8. Decision requested", level=1)
    d.add_paragraph(
        "Approve phase 0 (the version 16 upgrade) now, and phases 1 to 4 in principle, with a go/no-go review "
        "after phase 1. This document describes a fictional company and is part of a synthetic example corpus."
    )
    save_docx(d, VAULT / "work" / "2022-atlas-project-proposal.docx")


CHAPTER_ONE = [
    "The last boat left Corran Rock at a quarter past two on the fourteenth of October, 1894, and Iris Calder "
    "stood on the landing stage and watched it go until it was smaller than her thumbnail, and then smaller "
    "than that, and then it was only a word she was still thinking: gone.",
    "Her father had gone eleven days before. Not on a boat. The gale had come up out of the south-west on the "
    "night of the third, the worst she had known in fifteen years on the rock, and Thomas Calder had gone down "
    "to the landing stage at the height of it to make fast the store-boat, because the store-boat was the "
    "Board's property and the Board's property was to be made fast. She had watched his lantern from the "
    "gallery. She had watched it go down the iron ladder, and along the stage, and stop, and swing, once, as if "
    "he had turned to look up at her. And then the sea had come over the stage, white from one end to the "
    "other, and when it went back there was no lantern.",
    "The men on the relief boat today had not known. She had told them he was sleeping. She had given them the "
    "returns for the month in his hand, which she had practised at the kitchen table by lamplight until her "
    "wrist ached, and Captain Aske had taken the envelope and looked at it and said nothing, and she had not "
    "been able to tell whether that was because he believed her or because he did not.",
    "Now the boat was gone and the light was hers.",
    "She climbed the tower at half past three. One hundred and twelve steps, her father's count, said under her "
    "breath: one for the door, two for the damp, three for the Board. He had made a little rhyme of the first "
    "twenty and left the rest as numbers, because, he said, by the twentieth step a keeper should be thinking "
    "about the lamp and not about poetry.",
    "The lantern room was cold and full of the flat white light of an October afternoon. The great lens stood in "
    "the middle of it like a hive made of glass, prisms stacked in rings, every one of them polished that "
    "morning with rouge and chamois until her arms shook. She checked the oil. She trimmed the wicks, all four, "
    "square and level, the way he had shown her when she was eleven. She wound the clockwork that would turn "
    "the lens through the night, forty turns of the crank, and felt the weight rise in the tower beneath her "
    "like something taking a breath.",
    "At four minutes past four the sun touched the sea.",
    "At twelve minutes past four she lit the lamp.",
    "The flame caught blue, then yellow, then the steady white that meant the vaporiser was hot, and she "
    "lowered the glass chimney over it and stood back, and the clockwork began to turn, and the first beam "
    "went out across the water, long and slow, the way it had gone out every night for forty years.",
    "She went down to the watch room and opened the official log. It was a green cloth book, the Board's book, "
    "ruled in columns: date, time of lighting, time of extinguishing, oil consumed, weather, vessels sighted, "
    "remarks. She dipped the pen and wrote, in her father's small upright hand, 'Lamp lit at 4.12. Wind W, "
    "moderate. Sea slight. Weather closing from the south.' Under remarks she wrote nothing, because there was "
    "nothing in the Board's columns for what she had to say.",
    "Then she took down, from the shelf behind the logs, a plain notebook bought in Corran two summers ago for "
    "pressing flowers, and never used, and opened it at the first page, and wrote in her own hand, for the first "
    "time in her life, without thinking about whose hand it should be:",
    "'Lamp lit at 4.12. Weather closing. I have begun to keep a second book.'",
    "She looked at the line for a long time. Below her the sea went on doing what it had always done. Above "
    "her the light went round. Somewhere to the south a ship she would never see altered course by a point and "
    "a half, because a woman on a rock had lit a lamp at twelve minutes past four.",
    "'My father, Thomas Calder, Principal Keeper, was lost from the landing stage on the night of the third of "
    "October in the gale,' she wrote. 'Nobody knows this but me. I am keeping the light. I will keep this "
    "book for everything the other book has no column for.'",
    "Then she closed it, and put it back behind the logs, and climbed the hundred and twelve steps again to "
    "trim the wicks, because it was nine o'clock, and at nine o'clock the wicks were trimmed, whatever else "
    "had happened in the world.",
]


def chapter_one_docx() -> None:
    d = docx.Document()
    set_core(
        d,
        "The Lantern Archive - Chapter 1: The Lamp",
        "Sam Rivera",
        dt.datetime(2024, 8, 9, 21, 0, 0),
        "Novel draft, chapter 1",
    )
    d.styles["Normal"].font.size = Pt(12)
    d.add_heading("The Lantern Archive", level=0)
    d.add_paragraph(
        "A novel by Sam Rivera. Draft 6, written on Skerrin, August 2024. Fiction; all characters invented."
    )
    d.add_heading("Chapter 1: The Lamp", level=1)
    for text in CHAPTER_ONE:
        d.add_paragraph(text)
    save_docx(d, VAULT / "writing" / "lantern-archive-chapter-1.docx")


# --------------------------------------------------------------------- EML


def write_eml(path: Path, headers: dict[str, str], body: str) -> None:
    msg = EmailMessage()
    for key, value in headers.items():
        msg[key] = value
    msg.set_content(body.strip() + "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(msg.as_bytes(policy=EMAIL_POLICY))


def landlord_eml() -> None:
    write_eml(
        VAULT / "admin" / "mail" / "2025-04-02-landlord.eml",
        {
            "From": "Prudence Hale <prudence.hale@hale-lettings.example>",
            "To": "Sam Rivera <sam.rivera@mail.example>",
            "Date": "Wed, 02 Apr 2025 09:14:00 +0100",
            "Subject": "27 Alder Row - rent review from 1 July 2025",
            "Message-ID": "<20250402091400.2717@hale-lettings.example>",
        },
        """
Dear Sam,

I hope you and Pixel are both well, and that the rhubarb has survived the
winter.

I am writing, with some reluctance, about the annual rent review for 27 Alder
Row. My own costs (insurance and the mortgage on the property) have gone up
again this year, and I am afraid I have to pass some of that on. Under the
terms of your tenancy, and with the three months' notice I like to give
rather than the two the agreement requires:

  Current rent:   EUR 1,150 per month
  New rent:       EUR 1,210 per month
  From:           1 July 2025 (the payment due on that date)

Please amend your standing order in time for the July payment. The bank
details and the payment reference ("ALDER27") are unchanged.

Everything else in the tenancy stays as it is. You have been an excellent
tenant for nearly five years and I would very much like that to continue. If
you would like to talk about it, you know where I am, and the kettle is
always on.

On the other matter: I have not forgotten the back gutter. I will ask the
gutter man to come round in the next fortnight and will let you know the
date.

With best wishes,

Prudence Hale
Hale Lettings
""",
    )


def iris_oncall_eml() -> None:
    write_eml(
        VAULT / "work" / "mail" / "2024-11-20-iris-oncall.eml",
        {
            "From": "Iris Calder <iris.calder@northwind-labs.example>",
            "To": "Data Platform <data-platform@northwind-labs.example>",
            "Cc": "Tomas Okafor <tomas.okafor@northwind-labs.example>",
            "Date": "Wed, 20 Nov 2024 16:02:00 +0000",
            "Subject": "New on-call rotation from Monday 2 December",
            "Message-ID": "<20241120160200.4410@northwind-labs.example>",
        },
        """
Hi all,

With Mei and Ade (our September hires) now fully onboarded, we have six
people on the data platform rota, so from Monday 2 December the on-call
rotation changes:

- Weeks run Monday 10:00 to Monday 10:00 (not Friday to Friday any more).
  Handover happens on a call or in person, never just by message.
- Primary gets the first page. Secondary is paged after 15 minutes without
  an acknowledgement, or whenever the primary asks.
- Sam is escalation (third line) on every week he is not primary.
- With six of us, each person is primary about once every six weeks.

The first six weeks:
  2 Dec   Iris (primary), Sam (secondary)
  9 Dec   Sam, Priyanka
  16 Dec  Priyanka, Jonah
  23 Dec  Jonah, Mei  (Christmas week: swaps welcome, tell me)
  30 Dec  Mei, Ade
  6 Jan   Ade, Iris

Also new since INC-2041: a page fires when any replication slot retains more
than 10 GB of WAL or has been inactive for more than 24 hours. If it fires,
find the slot's owner and ticket before dropping anything.

Day off in lieu after any night with more than two hours of work between
23:00 and 07:00 is still the rule. Tomas checks, so take it.

I'll update the on-call handbook in the wiki this week. Shout if anything in
the first six weeks doesn't work for you.

Iris

--
Iris Calder
Database Administrator, Data Platform
Northwind Labs
""",
    )


def main() -> None:
    for sub in ("admin", "work", "writing", "admin/mail", "work/mail"):
        (VAULT / sub).mkdir(parents=True, exist_ok=True)
    car_insurance_pdf()
    tax_return_pdf()
    upgrade_report_pdf()
    atlas_proposal_docx()
    chapter_one_docx()
    landlord_eml()
    iris_oncall_eml()
    for path in sorted(VAULT.rglob("*")):
        if path.suffix in {".pdf", ".docx", ".eml"}:
            print(path.relative_to(VAULT.parent), path.stat().st_size)


if __name__ == "__main__":
    main()
