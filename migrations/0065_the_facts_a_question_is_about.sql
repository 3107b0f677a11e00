-- The facts section holds only what the question is about (plpy/fact_choice.py): a line found
-- by meaning is at least packet.fact_similarity similar to the question; a sensitive line (its
-- attribute matches a pattern of packet.sensitive_facts) appears only when asked for.
insert into exo_private.settings (key, value, description) values
    ('packet.fact_similarity', '0.4',
     'The cosine similarity to the question (of the question that asks for a fact, "What is my '
     'address?", or of its attribute and value) at which the packet''s facts section shows the fact '
     'although no word of the question is in it ("Where do I live?": address), if within 0.1 of the '
     'most similar line. Lines that share the question''s words, that the cited passages state, or '
     'of a question about the subject as a whole are shown whatever their similarity.'),
    ('packet.sensitive_facts',
     '["account", "iban", "bank", "card", "passport", "licen[cs]e", "social_security", "ssn", "national_insurance", "tax", "policy", "insurance", "blood", "health", "medical", "diagnos", "medication", "allerg", "microchip", "password", "pin$", "^pin"]',
     'Patterns (Python regular expressions, searched in each word of a fact''s attribute, and of '
     'its value when the value holds four digits or more) of the facts a packet shows only when the '
     'question asks for them, by those words or the attribute''s meaning: never in a profile, never '
     'because a cited passage states the value.')
on conflict (key) do nothing;
