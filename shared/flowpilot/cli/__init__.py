"""The ``flowpilot`` command line."""
