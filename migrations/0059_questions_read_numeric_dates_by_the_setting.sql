-- A question's numeric date that reads both ways ("02/03/2014") is read by the setting
-- banding.numeric_date_order, as documents' dates are: exo_private.detect_temporal takes it
-- (sql/120_temporal.sql defines the new signature; the old one goes), and the setting's
-- description says so.
drop function if exists exo_private.detect_temporal(text, jsonb, date, int);

update exo_private.settings
   set description = description || ' Questions read their numeric dates by it too (exo.temporal_signal).'
 where key = 'banding.numeric_date_order';
