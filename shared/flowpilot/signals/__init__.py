"""Signals: intake with a transactional outbox, the queue, and post-commit planning."""
