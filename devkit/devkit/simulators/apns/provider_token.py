"""Provider authentication: the `authorization: bearer <JWT>` header, checked as APNs does.

Apple's rules: ES256 signed by a key the team registered (`kid`), `iss` is the team id, `iat` no
older than one hour, and one connection may not switch tokens more than once per 20 minutes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

TOKEN_MAX_AGE_S = 60 * 60
TOKEN_MIN_REFRESH_S = 20 * 60
# Tolerated clock difference for an `iat` slightly in the future.
_CLOCK_SKEW_S = 60


@dataclass(frozen=True)
class TokenClaims:
    """What the journal shows about the token a push carried (never the token itself)."""

    kid: str | None
    iss: str | None
    iat: int | None


@dataclass(frozen=True)
class TokenCheck:
    """Outcome of checking one request's token: `reason` is None when it was accepted."""

    claims: TokenClaims | None
    status: int = 200
    reason: str | None = None


class ConnectionTokenState:
    """The token an HTTP/2 connection authenticated with, which APNs pins per connection.

    Also caches that token's verified claims: APNs-style senders reuse one token for thousands of
    pushes, and re-checking the signature each time would only cost CPU.
    """

    def __init__(self) -> None:
        self.token: str | None = None
        self.claims: TokenClaims | None = None
        self.since: float = 0.0


class ProviderTokenVerifier:
    """Checks provider tokens against the team id and the trusted public keys."""

    def __init__(self, team_id: str, keys: Mapping[str, ec.EllipticCurvePublicKey]) -> None:
        self._team_id = team_id
        self._keys = dict(keys)

    def check(
        self, authorization: str | None, connection: ConnectionTokenState, now: float | None = None
    ) -> TokenCheck:
        """Accept or reject the token of one request on `connection` (updating its pinned token)."""
        now = time.time() if now is None else now
        if not authorization:
            return TokenCheck(None, 403, "MissingProviderToken")
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return TokenCheck(None, 403, "InvalidProviderToken")
        if token == connection.token and connection.claims is not None:
            claims = connection.claims
        else:
            verified = self._verify(token)
            if isinstance(verified, TokenCheck):
                return verified
            claims = verified
        if claims.iat is None or now - claims.iat > TOKEN_MAX_AGE_S:
            return TokenCheck(claims, 403, "ExpiredProviderToken")
        if claims.iat > now + _CLOCK_SKEW_S:
            return TokenCheck(claims, 403, "InvalidProviderToken")
        if token != connection.token:
            if connection.token is not None and now - connection.since < TOKEN_MIN_REFRESH_S:
                return TokenCheck(claims, 429, "TooManyProviderTokenUpdates")
            connection.token, connection.claims, connection.since = token, claims, now
        return TokenCheck(claims)

    def _verify(self, token: str) -> TokenClaims | TokenCheck:
        try:
            header = jwt.get_unverified_header(token)
            unverified: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            return TokenCheck(None, 403, "InvalidProviderToken")
        kid = header.get("kid")
        iat = unverified.get("iat")
        claims = TokenClaims(
            kid=kid if isinstance(kid, str) else None,
            iss=str(unverified["iss"]) if "iss" in unverified else None,
            iat=iat if isinstance(iat, int) and not isinstance(iat, bool) else None,
        )
        key = self._keys.get(claims.kid or "")
        if header.get("alg") != "ES256" or key is None or claims.iss != self._team_id:
            return TokenCheck(claims, 403, "InvalidProviderToken")
        try:
            # Age is judged by the caller with APNs' own one-hour rule, not PyJWT's iat/exp checks.
            jwt.decode(
                token,
                key,
                algorithms=["ES256"],
                options={"verify_exp": False, "verify_iat": False, "verify_nbf": False},
            )
        except jwt.PyJWTError:
            return TokenCheck(claims, 403, "InvalidProviderToken")
        return claims
