-- exo_private.review_document recorded a reassignment as decision 'reassignd' (decision || 'd');
-- it records 'reassigned' now, and the decisions already recorded say so too.
update exo_private.documents d
   set review = d.review || '{"decision": "reassigned"}'
 where d.review ->> 'decision' = 'reassignd';
