"""Where the database is: ``DATABASE_URL``, a Secrets Manager secret, or the embedded one."""

from __future__ import annotations

from functools import cache

from flowpilot.config import Settings


def resolve_database_url(settings: Settings) -> str:
    if settings.database_url:
        return settings.database_url
    if settings.database_url_secret_arn:
        return _secret_value(settings.database_url_secret_arn)
    from flowpilot.local.embedded import ensure_embedded

    return ensure_embedded(settings.data_dir)


@cache
def _secret_value(arn: str) -> str:
    # Read at cold start, cached for the container's life; boto3 is loaded only on this path.
    from aws_lambda_powertools.utilities import parameters

    value = parameters.get_secret(arn)
    return value if isinstance(value, str) else value.decode()
