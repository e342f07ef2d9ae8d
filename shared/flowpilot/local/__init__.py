"""Running FlowPilot on one machine: embedded PostgreSQL, the dev server, docker-free invoke."""
