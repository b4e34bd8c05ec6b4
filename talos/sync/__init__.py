"""One memory on several machines: per-device state, and ``talos sync`` through git (design §12)."""
