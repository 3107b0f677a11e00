"""Currencies (stdlib only), one home for the code that reads or writes money: their signs by
code (changes reads "EUR 2,400.00" as "€2,400", timeline writes a total as "€2,400.00") and the
words that name them (the worker's event extraction reads "40 quid" as 40 GBP)."""

CURRENCY_SIGNS = {"EUR": "€", "GBP": "£", "USD": "$"}
CURRENCY_WORDS = {"pound": "GBP", "pounds": "GBP", "quid": "GBP", "dollar": "USD", "dollars": "USD",
                  "euro": "EUR", "euros": "EUR"}  # fmt: skip
