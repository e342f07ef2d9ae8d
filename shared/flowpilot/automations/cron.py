"""Schedules for automations: standard 5-field cron and ``rate(N minutes|hours|days)``.

Cron fields are minute, hour, day-of-month, month, day-of-week (UTC). Each accepts ``*``,
lists ``a,b``, ranges ``a-b``, steps ``*/n``, ``a-b/n`` and ``a/n``, and names (JAN-DEC,
SUN-SAT); day-of-week 0 and 7 are both Sunday. As in Vixie cron, when both day fields are
restricted (neither starts with ``*``) a day matches if either does. The ``@hourly``,
``@daily``, ``@weekly``, ``@monthly`` and ``@yearly`` shorthands are accepted too.

:func:`next_after` skips by fields (month, then day, hour, minute) instead of testing every
minute, so even ``0 0 29 2 *`` is found in a few hundred steps.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache

from flowpilot.errors import InvalidRequest

FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
_BOUNDS = {
    "minute": (0, 59),
    "hour": (0, 23),
    "day-of-month": (1, 31),
    "month": (1, 12),
    "day-of-week": (0, 7),
}
_MONTH_NAMES = {
    name: i + 1
    for i, name in enumerate(
        ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
    )
}
_MONTH_TITLES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_DAY_NAMES = {"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}
_SHORTHANDS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_RATE = re.compile(r"^rate\(\s*(\d+)\s+(minute|minutes|hour|hours|day|days)\s*\)$", re.I)
_UNIT = {"minute": "minutes", "hour": "hours", "day": "days"}
# Long enough for any satisfiable cron (Feb 29 can be 8 years away across 2100).
_SEARCH_YEARS = 9


def _invalid(spec: str, problem: str) -> InvalidRequest:
    return InvalidRequest(
        f"invalid schedule {spec!r}: {problem}",
        code="invalid_schedule",
        details={"schedule": spec, "problem": problem},
    )


@dataclass(frozen=True)
class RateSchedule:
    """Every N minutes, hours or days, counted from the whole minute after ``after``."""

    every: dt.timedelta

    def next_after(self, after: dt.datetime) -> dt.datetime:
        return _floor_minute(_utc(after)) + self.every


@dataclass(frozen=True)
class CronSchedule:
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    days_restricted: bool
    weekdays_restricted: bool

    def day_matches(self, day: dt.date) -> bool:
        in_month = day.day in self.days
        in_week = (day.weekday() + 1) % 7 in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return in_month or in_week
        return in_month and in_week

    def next_after(self, after: dt.datetime) -> dt.datetime:
        start = _floor_minute(_utc(after)) + dt.timedelta(minutes=1)
        limit = start.year + _SEARCH_YEARS
        day = start.date()
        hour, minute = start.hour, start.minute
        while day.year <= limit:
            if day.month not in self.months:
                day = _first_of_next_month(day)
                hour = minute = 0
                continue
            if not self.day_matches(day):
                day += dt.timedelta(days=1)
                hour = minute = 0
                continue
            found = _next_time(self.hours, self.minutes, hour, minute)
            if found is None:
                day += dt.timedelta(days=1)
                hour = minute = 0
                continue
            return dt.datetime(day.year, day.month, day.day, *found, tzinfo=dt.UTC)
        raise InvalidRequest("this schedule never fires", code="invalid_schedule")


Schedule = CronSchedule | RateSchedule


def next_after(spec: str, after: dt.datetime) -> dt.datetime:
    """The first time ``spec`` fires strictly after ``after`` (UTC, whole minutes)."""
    return parse_schedule(spec).next_after(after)


@lru_cache(maxsize=512)
def parse_schedule(spec: str) -> Schedule:
    """A parsed schedule; InvalidRequest(code="invalid_schedule") naming the bad field."""
    text = " ".join(spec.split())
    if not text:
        raise _invalid(spec, "the schedule is empty")
    if text.lower().startswith("rate"):
        return _parse_rate(spec, text)
    text = _SHORTHANDS.get(text.lower(), text)
    if text.startswith("@"):
        raise _invalid(spec, f"unknown shorthand {text!r}; use one of {', '.join(_SHORTHANDS)}")
    parts = text.split(" ")
    if len(parts) != 5:
        raise _invalid(
            spec,
            f"expected 5 fields (minute hour day-of-month month day-of-week), got {len(parts)}",
        )
    values = {
        name: _parse_field(spec, name, part) for name, part in zip(FIELDS, parts, strict=True)
    }
    weekdays = frozenset(d % 7 for d in values["day-of-week"])
    schedule = CronSchedule(
        minutes=tuple(sorted(values["minute"])),
        hours=tuple(sorted(values["hour"])),
        days=frozenset(values["day-of-month"]),
        months=frozenset(values["month"]),
        weekdays=weekdays,
        days_restricted=not parts[2].startswith("*"),
        weekdays_restricted=not parts[4].startswith("*"),
    )
    _check_satisfiable(spec, schedule)
    return schedule


def _parse_rate(spec: str, text: str) -> RateSchedule:
    match = _RATE.match(text)
    if match is None:
        raise _invalid(spec, "a rate reads like rate(5 minutes), rate(1 hour) or rate(2 days)")
    count = int(match.group(1))
    if count < 1:
        raise _invalid(spec, "a rate needs a whole number of at least 1")
    unit = match.group(2).lower()
    every = dt.timedelta(**{_UNIT.get(unit, unit): count})
    if every > dt.timedelta(days=3650):
        raise _invalid(spec, "a rate can be at most 3650 days")
    return RateSchedule(every)


def _parse_field(spec: str, name: str, text: str) -> set[int]:
    low, high = _BOUNDS[name]
    top = 6 if name == "day-of-week" else high  # 7 is only another name for Sunday
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise _invalid(spec, f"{name}: empty list item in {text!r}")
        base, slash, step_text = item.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) < 1:
                raise _invalid(spec, f"{name}: step {step_text!r} must be a whole number >= 1")
            step = int(step_text)
        if base == "*":
            start, end = low, top
        elif "-" in base:
            first, _, last = base.partition("-")
            start, end = _value(spec, name, first), _value(spec, name, last)
            if start > end:
                raise _invalid(spec, f"{name}: range {base!r} runs backwards")
        else:
            start = _value(spec, name, base)
            # "a/n" means from a to the end of the field, stepping n (Vixie cron).
            end = top if slash else start
        values.update(range(start, end + 1, step))
    return values


def _value(spec: str, name: str, text: str) -> int:
    low, high = _BOUNDS[name]
    upper = text.upper()
    if name == "month" and upper in _MONTH_NAMES:
        return _MONTH_NAMES[upper]
    if name == "day-of-week" and upper in _DAY_NAMES:
        return _DAY_NAMES[upper]
    if not text.isdigit():
        kind = {"month": "a number or a month name", "day-of-week": "a number or a day name"}
        raise _invalid(spec, f"{name}: {text!r} is not {kind.get(name, 'a number')}")
    value = int(text)
    if not low <= value <= high:
        raise _invalid(spec, f"{name}: {value} is out of range {low}-{high}")
    return value


def _check_satisfiable(spec: str, schedule: CronSchedule) -> None:
    """Reject day-of-month/month pairs that never occur, such as ``0 0 30 2 *``."""
    if schedule.weekdays_restricted and schedule.days_restricted:
        return  # either field may match, and some weekday occurs in every month
    if not schedule.days_restricted:
        return
    longest = {m: 29 if m == 2 else calendar.monthrange(2001, m)[1] for m in schedule.months}
    if any(day <= longest[m] for m in schedule.months for day in schedule.days):
        return
    months = ", ".join(_MONTH_TITLES[m - 1] for m in sorted(schedule.months))
    days = ", ".join(str(d) for d in sorted(schedule.days))
    raise _invalid(spec, f"day-of-month: day {days} never occurs in {months}")


def _next_time(
    hours: tuple[int, ...], minutes: tuple[int, ...], hour: int, minute: int
) -> tuple[int, int] | None:
    """The first (hour, minute) at or after hour:minute on one day, or None."""
    for h in hours:
        if h < hour:
            continue
        for m in minutes:
            if h > hour or m >= minute:
                return h, m
    return None


def _first_of_next_month(day: dt.date) -> dt.date:
    if day.month == 12:
        return dt.date(day.year + 1, 1, 1)
    return dt.date(day.year, day.month + 1, 1)


def _floor_minute(moment: dt.datetime) -> dt.datetime:
    return moment.replace(second=0, microsecond=0)


def _utc(moment: dt.datetime) -> dt.datetime:
    """Aware UTC; a naive datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)
