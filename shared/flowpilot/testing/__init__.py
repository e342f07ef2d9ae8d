"""Fakes that ship with FlowPilot: a scripted model server and a network guard for tests.

Nothing here is imported by the runtime; tests import the pieces they need.
"""
