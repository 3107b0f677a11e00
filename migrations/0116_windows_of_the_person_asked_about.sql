-- A question that names a person who takes part in some of the pool's conversations asks about
-- theirs: "Where are Sam and Aiden going on their trip?" is not answered by Sam's trips with
-- others. A chat window of a conversation without that person, whose text does not name them
-- either, ranks at other_conversation times its score (plpy/search.py other_conversations).
-- bench/chat_recall: a window holding the answer in the packet 85 -> 86% of 80 questions (10
-- conversations), 79 -> 83% of 800 (100 conversations); both answering messages of a question
-- across sessions 40 -> 70% and 26 -> 44%.
update exo_private.settings
   set value = value || jsonb_build_object('other_conversation', 0.5),
       description = description || ' other_conversation: the factor of a chat window of a conversation '
                                  || 'without the person the question names, where other conversations have them.'
 where key = 'retrieval.rank_weights' and not value ? 'other_conversation';
