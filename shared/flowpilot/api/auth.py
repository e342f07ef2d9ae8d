"""Who is calling: a Supabase JWT or a FlowPilot API key, and so which tenant.

The tenant always comes from here, never from a request body or model output.
JWTs: HS256 with the project's secret, or ES256/RS256 through the project's JWKS URL;
``alg``, ``aud``, ``iss`` (when configured) and ``exp`` are checked, ``alg: none`` never passes.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from flowpilot.config import Settings, get_settings
from flowpilot.db import Database
from flowpilot.errors import Forbidden, Unauthorized


@dataclass(frozen=True)
class Principal:
    tenant_id: uuid.UUID
    subject: str
    kind: str  # "api_key" | "jwt"
    scopes: tuple[str, ...] = ("*",)
    platform_admin: bool = False

    def require(self, scope: str) -> None:
        if "*" not in self.scopes and scope not in self.scopes:
            raise Forbidden(f"this credential lacks the {scope!r} scope", code="missing_scope")


def credential_from_headers(headers: Mapping[str, str]) -> str:
    api_key = headers.get("x-api-key")
    if api_key:
        return api_key.strip()
    authorization = headers.get("authorization", "")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(
            "send a Supabase JWT or an API key as 'Authorization: Bearer ...' or 'X-API-Key'",
            code="missing_credentials",
        )
    return token.strip()


def authenticate(db: Database, headers: Mapping[str, str]) -> Principal:
    credential = credential_from_headers(headers)
    if credential.startswith("fp_"):
        from flowpilot.tenancy import authenticate_api_key

        owner = authenticate_api_key(db, credential)
        return Principal(
            tenant_id=owner.tenant_id,
            subject=f"api_key:{owner.key_id}",
            kind="api_key",
            scopes=owner.scopes,
            platform_admin="platform:admin" in owner.scopes,
        )
    return principal_from_jwt(credential, get_settings())


@cache
def _jwks_client(url: str) -> Any:
    import jwt

    return jwt.PyJWKClient(url, cache_keys=True, lifespan=600, timeout=5)


def principal_from_jwt(token: str, settings: Settings) -> Principal:
    import jwt

    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise Unauthorized("the token is not a JWT", code="invalid_token") from None
    algorithm = header.get("alg")
    if algorithm == "HS256" and settings.jwt_secret:
        key: Any = settings.jwt_secret
    elif algorithm in {"ES256", "RS256"} and settings.jwks_url:
        try:
            key = _jwks_client(settings.jwks_url).get_signing_key_from_jwt(token).key
        except jwt.PyJWTError as exc:
            raise Unauthorized(f"no key to verify the token: {exc}", code="invalid_token") from None
    else:
        raise Unauthorized(
            f"tokens signed with {algorithm!r} are not accepted", code="invalid_token"
        )
    options = {"require": ["exp", "aud"] + (["iss"] if settings.jwt_issuer else [])}
    try:
        claims = jwt.decode(
            token,
            key,
            algorithms=[algorithm],
            audience=settings.jwt_audience,
            issuer=settings.jwt_issuer,
            options=options,  # type: ignore[arg-type]
        )
    except jwt.ExpiredSignatureError:
        raise Unauthorized("the token has expired", code="token_expired") from None
    except jwt.PyJWTError as exc:
        raise Unauthorized(f"the token is not valid: {exc}", code="invalid_token") from None
    return Principal(
        tenant_id=_tenant_claim(claims, settings.jwt_tenant_claim),
        subject=str(claims.get("sub") or "unknown"),
        kind="jwt",
        platform_admin=_claim(claims, "flowpilot_role") == "platform_admin",
    )


def _claim(claims: Mapping[str, Any], name: str) -> Any:
    # Supabase puts custom claims at the top level or under app_metadata.
    if name in claims:
        return claims[name]
    metadata = claims.get("app_metadata")
    return metadata.get(name) if isinstance(metadata, dict) else None


def _tenant_claim(claims: Mapping[str, Any], name: str) -> uuid.UUID:
    value = _claim(claims, name)
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise Unauthorized(f"the token has no valid {name!r} claim", code="no_tenant") from None
