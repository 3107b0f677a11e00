-- Nothing answers a question whose words the memory uses when no sentence of the documents a
-- packet would show comes near it in meaning (plpy/search.py answer_check). A memory of Debian's
-- FAQs without sed's shares "string", "letters" and "convert" with "How do I convert a string to
-- all lowercase or capital letters?"; a passage of it holding several answers is as near such a
-- question as one that answers it, while the sentence that answers comes nearer than any
-- sentence of a passage that does not (MiniLM: answered questions 0.4-0.9, median 0.7; another
-- program's questions 0.17-0.68, median 0.35).
insert into exo_private.settings (key, value, description) values
    ('packet.answer_far_sentence_similarity', '0.45',
     'The cosine similarity to the question below which no sentence holding one of its words, of '
     'the documents a packet would show (its first packet.max_chunks candidates, none a chat '
     'window or holding a key: value line), answers a question '
     'of three content words or more that writes no name: the packet then says nothing in the '
     'memory answers. The sentences are embedded at search time, one call. 0 turns it off.');
