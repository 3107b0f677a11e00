-- The best evidence of a context packet is shown at twice packet.excerpt_chars (plpy/search.py
-- packet): the sentence that answers is often not the one that shares the question's words.
update exo_private.settings
   set description = 'Characters of each cited chunk in a context packet (the first, the best evidence, '
                     'twice as many): the passage that best matches the question.'
 where key = 'packet.excerpt_chars';
