-- One vector per chat message and embedding model ("Sender: text", as a message reads alone):
-- the packet picks a chat window's answering message by meaning, since an answer often shares
-- no word with the question ("Where does Priya live now?" / "Officially a Lyon resident now").
-- The worker embeds a window's messages with the window (exo_private.store_message_embeddings);
-- a message in two overlapping windows is embedded once.
create table exo_private.chat_message_embeddings (
    message_id bigint not null references exo_private.chat_messages (id) on delete cascade,
    model_id   int not null references exo_private.embedding_models (id),
    embedding  vector not null,
    primary key (message_id, model_id)
);
comment on table exo_private.chat_message_embeddings is
    'One vector per chat message and embedding model, of "Sender: text"; read by '
    'exo_private.message_similarity to choose the lines of a chat window''s excerpt.';

-- Windows embedded before this have messages without vectors: embed those windows again
-- (their own vectors are rewritten unchanged; the messages' are new).
select pgmq.send_batch('embed', array_agg(jsonb_build_object('chunk_id', w.chunk_id, 'workspace', w.workspace)))
from exo_private.chat_windows w
where exists (select 1 from exo_private.chunk_embeddings e where e.workspace = w.workspace and e.chunk_id = w.chunk_id)
having count(*) > 0;

insert into exo_private.settings (key, value, description) values
    ('packet.chat_excerpt_chars', '120',
     'A chat excerpt''s room: its answering message (whole, up to packet.excerpt_chars) and the '
     'messages around it while the excerpt stays within this many characters.');
