"""FlowPilot: an autonomous business operator on AWS Lambda and PostgreSQL."""

__version__ = "0.1.0"
