-- How a numeric date with both numbers 12 or less reads ("04/03/2025": 4 March or April 3),
-- wherever plpy/banding.py dates a document (frontmatter, title and first lines, text, path).

insert into exo_private.settings (key, value, description) values
    ('banding.numeric_date_order', '"dmy"',
     'How a document''s numeric dates read where both numbers could be the month ("04/03/2025", '
     '"04-03-2025", "04.03.2025"): ''dmy'' (day first: 4 March 2025) or ''mdy'' (month first: '
     'April 3, 2025). A number over 12 is the day either way ("24/06/2025", "06/24/2025"). Read at '
     'ingest (exo_private.plan_document); documents ingested before a change keep their dates '
     'until re-ingested or rebuilt (exo rebuild).');
