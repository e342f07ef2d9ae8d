"""agent-execute: the one place where skills run (trust gate, approvals, dispatch, audit)."""
