"""``python -m talos`` runs the CLI (``talos hook AGENT`` on its fast path, :mod:`talos.entry`)."""

from talos.entry import main

main()
