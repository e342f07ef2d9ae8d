"""Conversations with the operator: threads, their messages, and one engine turn per message."""
