"""``python -m protocoder`` runs the command line."""

from protocoder.cli import run

run()
