"""The HTTP front doors (FastAPI): chat-completion's API and agent-execute's routes."""
