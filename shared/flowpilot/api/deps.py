"""FastAPI dependencies: the database and the authenticated caller."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from flowpilot.api.auth import Principal, authenticate
from flowpilot.db import Database, get_db
from flowpilot.errors import Forbidden


def database() -> Database:
    return get_db()


def principal(request: Request, db: Annotated[Database, Depends(database)]) -> Principal:
    return authenticate(db, request.headers)


def platform_admin(caller: Annotated[Principal, Depends(principal)]) -> Principal:
    if not caller.platform_admin:
        raise Forbidden("this needs a platform administrator", code="platform_admin_only")
    return caller


DB = Annotated[Database, Depends(database)]
Caller = Annotated[Principal, Depends(principal)]
Admin = Annotated[Principal, Depends(platform_admin)]
