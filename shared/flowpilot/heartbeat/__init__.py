"""The heartbeat: the operator's autonomous loop, one tick per tenant with work."""
