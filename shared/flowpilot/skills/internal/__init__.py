"""The built-in internal skills: memory, objectives, briefing, signals, email, HTTP and
reflection. Each module registers its handlers with ``@internal(name)`` when imported; the
``internal:`` handler kind imports them all on first use.
"""
