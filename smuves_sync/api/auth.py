"""Bearer tokens: HS256 JWTs signed with ``SMUVES_JWT_SECRET``, the shape Supabase issues.

    verifier = TokenVerifier(settings.jwt_secret, audience="authenticated")
    principal = verifier.verify(token)      # -> Principal(user_id, email, …) or 401
    principal = verifier.from_header(request.headers.get("authorization"))
    token = mint_token(settings.jwt_secret, user_id, email, audience="authenticated")  # dev only

`sub` must be the user's uuid and `exp` must be present and in the future. `aud` must be
``SMUVES_JWT_AUDIENCE`` (Supabase's user tokens say "authenticated"); a verifier without an
audience is refused unless ``SMUVES_JWT_ALLOW_ANY_AUDIENCE`` says so on purpose, since a
token issued for another application of the same identity provider would pass.

The `email` claim counts only when the token also says `email_verified: true` (the JSON
boolean): then it becomes the user's email in app_users (compared lower-cased), and a first
sign-in takes over the user the operator invited with that email (`portal add --owner`).
Nothing else of a token is believed beyond `sub`, `exp`, `aud` and `email_verified`.

Requests under /v1 are authenticated by `edges.Authenticate` before their body is read; the
`current_principal` dependency hands the route what it found (and documents the scheme).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated

import jwt
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import SecretStr

from smuves_sync.api.errors import ApiError
from smuves_sync.errors import ConfigurationError

# Tokens a few seconds past `exp` still pass: clocks of the issuer and of this server differ.
_LEEWAY_SECONDS = 5
_CHALLENGE = {"WWW-Authenticate": "Bearer"}


@dataclass(frozen=True, slots=True)
class Principal:
    """The user a verified token speaks for."""

    user_id: uuid.UUID
    email: str | None
    # The identity provider checked `email` (the token's email_verified claim is true).
    email_verified: bool
    # The token's `exp`: what the caller was let in with ends there (an event stream too).
    expires_at: datetime


def unauthenticated(message: str) -> ApiError:
    """401 with the Bearer challenge."""
    return ApiError(401, "UNAUTHENTICATED", message, headers=_CHALLENGE)


class TokenVerifier:
    """Checks signature, expiry and subject of bearer tokens; the secret stays inside."""

    def __init__(
        self,
        secret: SecretStr | None,
        *,
        audience: str | None = None,
        allow_any_audience: bool = False,
    ) -> None:
        if secret is None or not secret.get_secret_value():
            raise ConfigurationError(
                "SMUVES_JWT_SECRET is not set; the HTTP API needs it to verify bearer tokens"
            )
        if not audience and not allow_any_audience:
            raise ConfigurationError(
                "SMUVES_JWT_AUDIENCE is not set; the HTTP API accepts only tokens issued for it "
                "(Supabase: authenticated); set SMUVES_JWT_ALLOW_ANY_AUDIENCE=1 to accept any "
                "audience on purpose"
            )
        self._secret = secret
        self._audience = audience or None

    def __repr__(self) -> str:
        return "TokenVerifier(<hidden>)"

    def verify(self, token: str) -> Principal:
        """The principal of a valid token; `ApiError` 401 saying what is wrong otherwise."""
        try:
            claims = jwt.decode(
                token,
                self._secret.get_secret_value(),
                algorithms=["HS256"],
                audience=self._audience,
                leeway=_LEEWAY_SECONDS,
                options={"require": ["exp", "sub"], "verify_aud": self._audience is not None},
            )
        except jwt.ExpiredSignatureError:
            raise unauthenticated("the bearer token has expired") from None
        except jwt.InvalidSignatureError:
            raise unauthenticated("the bearer token's signature does not verify") from None
        except jwt.MissingRequiredClaimError as exc:
            raise unauthenticated(f"the bearer token has no {exc.claim!r} claim") from None
        except jwt.InvalidAudienceError:
            raise unauthenticated("the bearer token is meant for another audience") from None
        except jwt.InvalidTokenError:
            raise unauthenticated("the bearer token is malformed") from None
        try:
            user_id = uuid.UUID(str(claims["sub"]))
        except ValueError:
            raise unauthenticated("the bearer token's 'sub' claim is not a user id") from None
        email = claims.get("email")
        usable = isinstance(email, str) and 0 < len(email) <= 320 and email.isprintable()
        # PyJWT has checked that `exp` is a number in the future (give or take the leeway).
        expires_at = datetime.fromtimestamp(float(claims["exp"]), UTC)
        return Principal(
            user_id=user_id,
            email=email if usable else None,
            email_verified=usable and claims.get("email_verified") is True,
            expires_at=expires_at,
        )

    def from_header(self, authorization: str | None) -> Principal:
        """The principal of an ``Authorization: Bearer <token>`` header value, or 401."""
        scheme, _, credentials = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            raise unauthenticated("an Authorization: Bearer <token> header is required")
        return self.verify(credentials.strip())


def mint_token(
    secret: SecretStr,
    user_id: uuid.UUID,
    email: str,
    *,
    audience: str | None,
    lifetime: timedelta = timedelta(hours=12),
    now: datetime | None = None,
) -> str:
    """A token `TokenVerifier` accepts for `user_id`, its `email` verified, signed with
    `secret`: for a development playground (`smuves dev token`); in production the identity
    provider issues them."""
    issued = now or datetime.now(UTC)
    claims: dict[str, object] = {
        "sub": str(user_id),
        "email": email,
        "email_verified": True,
        "role": "authenticated",
        "iat": int(issued.timestamp()),
        "exp": int((issued + lifetime).timestamp()),
    }
    if audience:
        claims["aud"] = audience
    return jwt.encode(claims, secret.get_secret_value(), algorithm="HS256")


_bearer = HTTPBearer(
    auto_error=False,
    description="A JWT (HS256, signed with SMUVES_JWT_SECRET) whose `sub` is your user id.",
)


PRINCIPAL_STATE = "principal"


def current_principal(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """FastAPI dependency: the caller (as `edges.Authenticate` found them), or 401."""
    found = request.scope.get("state", {}).get(PRINCIPAL_STATE)
    if isinstance(found, Principal):
        return found
    # Outside the middleware's paths: verify here (the body, if any, has been read by now).
    verifier: TokenVerifier = request.app.state.verifier
    if credentials is None:
        raise unauthenticated("an Authorization: Bearer <token> header is required")
    return verifier.verify(credentials.credentials)


CurrentPrincipal = Annotated[Principal, Depends(current_principal)]
