-- The band a chunk had on a day: what exo.search and its packet use when asked as of a past
-- day (as_of), so that a search as of 2015 treats 2014 material as current. The rule of
-- plpy/banding.py band_by_age (the one exo_private.reband applies every night), written in SQL
-- because the retrieval stages filter on it row by row.

-- exo_private.band_as_of: a chunk's band as of a day, from its stored band and its date.
create or replace function exo_private.band_as_of(
    stored exo_private.band, written date, follows_age boolean, as_of date, current_days int, recent_days int
)
returns exo_private.band
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- As of today or later the stored band is the answer (exo_private.reband keeps it); so it is
    -- for an undated chunk, and for one whose band does not follow its age (declared in
    -- frontmatter, or a canonical document's: current).
    if as_of is null or as_of >= current_date or written is null or follows_age is not true then
        return stored;
    end if;
    return case when as_of - written <= current_days then 'current'::exo_private.band
                when as_of - written <= recent_days then 'recent'::exo_private.band
                else 'archival'::exo_private.band end;
end
$$;
comment on function exo_private.band_as_of(exo_private.band, date, boolean, date, int, int) is
    'The band of a chunk as of a day (plpy/banding.py band_by_age in SQL): the stored band when as_of '
    'is null, today or later, when the chunk is undated or its band does not follow its age '
    '(follows_age: its document''s band is inferred and the document is not canonical); else current '
    'within current_days of written, recent within recent_days, archival beyond (the banding.* '
    'settings). exo_private.stage_sql filters on it and exo_private.pool_details reports it.';
