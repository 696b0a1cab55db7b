"""``python -m protocoder`` runs the command line."""

from protocoder.cli import main

main()
