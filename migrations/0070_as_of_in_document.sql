-- exo.document takes as_of (sql/520_documents.sql): a document not written by then is refused.
-- The old signature goes; the sql file makes the new one.
drop function if exists exo.document(text, text[]);
