-- The self-audit (issue 15): each fact source keeps the content hash its document had when it
-- was recorded, so the audit (sql/630_audit.sql) can tell a source that changed from one that
-- still says what it said. Filled by a trigger on insert; sources recorded before now take
-- their document's hash of today.

alter table exo_private.fact_sources add column document_sha256 text;
comment on column exo_private.fact_sources.document_sha256 is
    'The sha256 of the source''s document (document_id, else the chunk''s document) when the source '
    'was recorded; the self-audit flags the fact when the document''s sha256 differs since.';

update exo_private.fact_sources s
   set document_sha256 = d.sha256
  from exo_private.documents d
 where d.id = coalesce(s.document_id, (select c.document_id from exo_private.chunks c where c.id = s.chunk_id));

-- exo.status (sql/540_status.sql) shows the audit's numbers, and sql/ files are applied in name
-- order: declared here so that 540 finds it; sql/630_audit.sql defines it.
create function exo.audit_summary() returns jsonb
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$ select '{}'::jsonb $$;
