-- Temporal signals in a retrieval query (body in plpy/temporal.py): years,
-- decades, month-years, dates, relative expressions and the configured cues.
-- Search reads them to decide whether the archival band opens.

-- exo_private.detect_temporal: the temporal signals of a query, given the cues and the threshold.
create or replace function exo_private.detect_temporal(
    query text, cues jsonb, as_of date, archive_after_days int, numeric_order text
)
returns jsonb
language plpython3u immutable parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include temporal
import datetime
import json

if cues is None:
    raise ValueError("cues is null: is the setting retrieval.temporal_cues missing?")
if archive_after_days is None:
    raise ValueError("archive_after_days is null: is the setting retrieval.archive_after_days missing?")
if as_of is None:
    raise ValueError("as_of must not be null")
return json.dumps(detect(query, json.loads(cues), datetime.date.fromisoformat(as_of), archive_after_days,
                         numeric_order or "dmy"))
$$;
comment on function exo_private.detect_temporal(text, jsonb, date, int, text) is
    'Temporal signals of a query (plpy/temporal.py) for the given cue phrases, day, archive threshold '
    'and numeric date order (dmy or mdy; null: dmy).';

-- exo.temporal_signal: the temporal signals of a query, with the configured cues and threshold.
create or replace function exo.temporal_signal(query text, as_of date default current_date)
returns jsonb
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select exo_private.detect_temporal(
        query,
        (select s.value from exo_private.settings s where s.key = 'retrieval.temporal_cues'),
        coalesce(as_of, current_date),
        (select s.value from exo_private.settings s where s.key = 'retrieval.archive_after_days')::int,
        (select s.value #>> '{}' from exo_private.settings s where s.key = 'banding.numeric_date_order'))
$$;
comment on function exo.temporal_signal(text, date) is
    'Temporal signals of a query (years, decades, month-years, dates, relative expressions, the cues in '
    'retrieval.temporal_cues) and whether they open the archival band (retrieval.archive_after_days).';
