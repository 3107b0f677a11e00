-- Settings of the temporal signal detector (exo.temporal_signal, plpy/temporal.py):
-- the cue phrases and how far back a signal must point to open the archival band.

insert into exo_private.settings (key, value, description) values
    ('retrieval.temporal_cues', $json$["history", "historical", "growing up", "grew up", "back when",
        "back then", "back in the day", "used to", "originally", "as of", "when I was",
        "childhood", "as a child", "as a kid", "anymore", "no longer", "in the past",
        "formerly", "in those days", "the old days"]$json$,
     'Phrases (case-insensitive, whole words) that mark a query as about the past: each is a '
     'temporal signal and opens the archival band, unless directly followed by a date or "now".'),
    ('retrieval.archive_after_days', '365',
     'A year, month, date or relative time in a query opens the archival band when it reaches at '
     'least this many days into the past (a bare current year never does).'),
    ('retrieval.embed_timeout_s', '3',
     'Seconds a query waits for its embedding; past it the semantic stage is skipped and the '
     'report says so (the query never errors).');
