"""``python -m talos`` runs the CLI."""

from talos.cli import main

main()
