"""Automations: a skill run on a schedule (cron or rate) or in reaction to an event or signal.

``store`` creates and manages them, ``cron`` reads schedules, ``runner`` runs the due ones
(the heartbeat's pre-pass calls :func:`flowpilot.automations.runner.run_due`).
"""
