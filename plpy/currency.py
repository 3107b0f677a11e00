"""Currency signs by code (stdlib only), one home for the plpy modules that read or write money
(changes reads "EUR 2,400.00" as "€2,400", timeline writes a total as "€2,400.00")."""

CURRENCY_SIGNS = {"EUR": "€", "GBP": "£", "USD": "$"}
