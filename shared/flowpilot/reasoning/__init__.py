"""The reasoning engine: one run() for every trigger (chat, heartbeat, signal, peer, automation)."""
