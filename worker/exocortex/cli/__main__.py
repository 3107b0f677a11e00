"""`python -m exocortex.cli`: the exo command."""

from exocortex.cli import main

main()
