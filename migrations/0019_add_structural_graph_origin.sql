-- Mentions and relations say where they come from: 'model' (graph extraction of a window) or
-- 'structure' (known without a model: who took part in a chat window, sql/310_chat_graph.sql).
-- exo.person_history gains the Person entities of each identity: a changed return type, so
-- the old function goes here and sql/530_conversations.sql creates the new one.
alter table exo_private.mentions
    add column origin text not null default 'model' check (origin in ('model', 'structure'));
comment on column exo_private.mentions.origin is
    'model: graph extraction named the entity in the window; structure: known from the source '
    'itself (a chat window''s senders), kept through every extraction and rebuilt with each generation.';
alter table exo_private.relations
    add column origin text not null default 'model' check (origin in ('model', 'structure'));
comment on column exo_private.relations.origin is
    'model: graph extraction returned it; structure: known from the source itself (people who '
    'talked in one chat window).';
drop function if exists exo.person_history(text, int, text[]);
