"""Idempotent execution with Powertools Idempotency over a PostgreSQL persistence layer.

One idempotency key (per tenant) executes at most once; later calls get the stored result.
A call that arrives while the first is still running waits for its result instead of
failing, so concurrent duplicates also see identical responses.
"""

from __future__ import annotations

import contextvars
import time
import uuid
import warnings
from collections.abc import Callable
from functools import cache
from typing import Any

from aws_lambda_powertools.utilities.idempotency import (
    BasePersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from flowpilot.db import Database, get_db
from flowpilot.errors import Conflict, DatabaseError, FlowPilotError, InvalidRequest

# Execution runs are short; a claim older than this is taken to be from a crashed call.
IN_PROGRESS_TTL_MS = 60_000
WAIT_FOR_RESULT_S = 30.0

# We set our own in-progress expiry (IN_PROGRESS_TTL_MS) when no Lambda context is known.
warnings.filterwarnings("ignore", message="Couldn't determine the remaining time left")

_tenant: contextvars.ContextVar[uuid.UUID] = contextvars.ContextVar("idempotency_tenant")


class PostgresPersistenceLayer(BasePersistenceLayer):
    """Powertools persistence over the ``idempotency_records`` table, scoped per tenant."""

    def __init__(self, database: Callable[[], Database] = get_db) -> None:
        super().__init__()
        self._database = database

    @property
    def _tenant(self) -> uuid.UUID:
        return _tenant.get()

    def _get_record(self, idempotency_key: str) -> DataRecord:
        row = self._database().one(self._tenant, "idempotency_get", key=idempotency_key)
        if row is None:
            raise IdempotencyItemNotFoundError
        return DataRecord(
            idempotency_key=row["idempotency_key"],
            status=row["status"],
            expiry_timestamp=row["expiry_timestamp"],
            in_progress_expiry_timestamp=row["in_progress_expiry_timestamp"],
            response_data=row["response_data"] or "",
            payload_hash=row["payload_hash"] or "",
        )

    def _put_record(self, data_record: DataRecord) -> None:
        now = time.time()
        in_progress_expiry = data_record.in_progress_expiry_timestamp or int(
            now * 1000 + IN_PROGRESS_TTL_MS
        )
        claimed = self._database().one(
            self._tenant,
            "idempotency_put",
            key=data_record.idempotency_key,
            status=data_record.status,
            expiry=data_record.expiry_timestamp,
            in_progress_expiry=in_progress_expiry,
            payload_hash=data_record.payload_hash,
            now_s=int(now),
            now_ms=int(now * 1000),
        )
        if claimed is None:
            raise IdempotencyItemAlreadyExistsError

    def _update_record(self, data_record: DataRecord) -> None:
        self._database().run(
            self._tenant,
            "idempotency_update",
            key=data_record.idempotency_key,
            status=data_record.status,
            expiry=data_record.expiry_timestamp,
            response_data=data_record.response_data,
            payload_hash=data_record.payload_hash,
        )

    def _delete_record(self, data_record: DataRecord) -> None:
        self._database().run(self._tenant, "idempotency_delete", key=data_record.idempotency_key)


@cache
def _persistence() -> PostgresPersistenceLayer:
    return PostgresPersistenceLayer()


CONFIG = IdempotencyConfig(
    event_key_jmespath="[tenant_id, idempotency_key]",
    payload_validation_jmespath="[skill, arguments, actor]",
    raise_on_no_idempotency_key=True,
    expires_after_seconds=24 * 3600,
    use_local_cache=False,
)


def run_once(
    request: dict[str, Any],
    execute: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    persistence: PostgresPersistenceLayer | None = None,
) -> dict[str, Any]:
    """Run ``execute(request)`` at most once per (tenant, idempotency key)."""
    store = persistence or _persistence()
    token = _tenant.set(uuid.UUID(str(request["tenant_id"])))
    try:
        guarded = idempotent_function(
            data_keyword_argument="request", persistence_store=store, config=CONFIG
        )(_call)
        deadline = time.monotonic() + WAIT_FOR_RESULT_S
        while True:
            try:
                result: dict[str, Any] = guarded(request=request, execute=execute)
                return result
            except IdempotencyAlreadyInProgressError:
                # Another call holds the key: wait for its stored result.
                if time.monotonic() > deadline:
                    raise Conflict(
                        "an execution with this idempotency key is still in progress",
                        code="idempotency_in_progress",
                    ) from None
                time.sleep(0.05)
            except IdempotencyValidationError:
                raise Conflict(
                    "this idempotency key was already used for a different request",
                    code="idempotency_key_reused",
                ) from None
            except IdempotencyPersistenceLayerError as exc:
                raise _persistence_error(exc) from exc
    finally:
        _tenant.reset(token)


def _persistence_error(exc: IdempotencyPersistenceLayerError) -> FlowPilotError:
    cause = next((arg for arg in exc.args if isinstance(arg, FlowPilotError)), None)
    if cause is not None and cause.code == "missing_reference":
        return InvalidRequest("this tenant does not exist", code="unknown_tenant")
    return cause or DatabaseError("the idempotency store is unavailable")


def _call(request: dict[str, Any], execute: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    return execute(request)
