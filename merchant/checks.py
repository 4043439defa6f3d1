"""System checks for the merchant settings (and pg_trgm's Japanese support on PostgreSQL)."""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks
from django.db import connections

from mcpsite.core.db import has_trigram_indexes
from mcpsite.core.problems import SETTINGS, Problem, check_messages

from .sql import trigram_ctype


def settings_problems() -> list[Problem]:
    return [*_search_problems(), *_shop_problems(), *_signing_key_problems()]


def _error(msg: str, id_: str) -> Problem:
    return Problem(f"merchant.{id_}", msg)


def _search_problems() -> list[Problem]:
    """The Meilisearch connection."""
    problems: list[Problem] = []
    if settings.MEILISEARCH_URL and urlsplit(settings.MEILISEARCH_URL).scheme not in {"http", "https"}:
        problems.append(_error(f"MEILISEARCH_URL must be an http(s) URL, got {settings.MEILISEARCH_URL!r}", "E001"))
    if settings.MEILISEARCH_URL and not settings.MEILISEARCH_MASTER_KEY:
        problems.append(
            Problem(
                "merchant.W003",
                "MEILISEARCH_URL is set without MEILISEARCH_MASTER_KEY: searches go unauthenticated, so a Meilisearch "
                "that has a master key refuses every one and search falls back to the database",
                hint="Set MEILISEARCH_MASTER_KEY to the Meilisearch's key (or an API key with search and documents "
                "rights); leave it empty only for a Meilisearch started without a master key.",
                warning=True,
            )
        )
    if not settings.MEILISEARCH_INDEX:
        problems.append(_error("MEILISEARCH_INDEX must not be empty", "E002"))
    if settings.MEILISEARCH_TIMEOUT_S <= 0:
        problems.append(_error("MEILISEARCH_TIMEOUT_S must be positive", "E003"))
    return problems


def _shop_problems() -> list[Problem]:
    """Amounts, the merchant's identity and the cart's lifetime."""
    problems: list[Problem] = []
    for name in ("SHIPPING_FEE", "FREE_SHIPPING_THRESHOLD"):
        value = getattr(settings, name)
        if not isinstance(value, Decimal) or not value.is_finite() or value < 0:
            problems.append(_error(f"{name} must be a non-negative amount in yen, got {value!r}", "E004"))
    rate = settings.TAX_RATE
    if not isinstance(rate, Decimal) or not rate.is_finite() or not (0 <= rate < 1):
        problems.append(_error(f"TAX_RATE must be a fraction between 0 and 1 (0.10 for 10%), got {rate!r}", "E005"))
    if not settings.MERCHANT_ID or not settings.MERCHANT_NAME:
        problems.append(_error("MERCHANT_ID and MERCHANT_NAME must not be empty", "E006"))
    if settings.CART_EXPIRY_MINUTES <= 0:
        problems.append(_error("CART_EXPIRY_MINUTES must be positive", "E007"))
    return problems


def _signing_key_problems() -> list[Problem]:
    """The key mandates are signed with."""
    if not settings.MERCHANT_SIGNING_KEY:
        return []
    from cryptography.exceptions import UnsupportedAlgorithm

    from .mandates import signing_key

    try:
        algorithm, key = signing_key(settings.MERCHANT_SIGNING_KEY)
    except (ValueError, TypeError, KeyError, UnsupportedAlgorithm) as exc:
        return [
            _error(
                f"MERCHANT_SIGNING_KEY is not a usable key ({type(exc).__name__}); see docs/apps/merchant.md", "E008"
            )
        ]
    if algorithm == "HS256" and len(key) < 32:
        short = "MERCHANT_SIGNING_KEY is a short HS256 secret; use at least 32 random bytes"
        return [Problem("merchant.W001", short, warning=True)]
    return []


@checks.register("merchant", SETTINGS)
def check_settings(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    return check_messages(settings_problems())


@checks.register(checks.Tags.database)
def check_trigram_ctype(app_configs=None, databases=None, **kwargs) -> list[checks.CheckMessage]:
    """pg_trgm makes no trigrams from Japanese when LC_CTYPE is C: the database search would find nothing."""
    warnings = []
    for alias in databases or []:
        connection = connections[alias]
        if not has_trigram_indexes(connection):
            continue
        found = trigram_ctype(connection)
        if found is None:
            continue  # not migrated yet
        trigrams, ctype = found
        if not trigrams:
            warnings.append(
                Problem(
                    "merchant.W002",
                    f"Database {alias!r} has LC_CTYPE {ctype!r}: pg_trgm yields no trigrams for Japanese, so "
                    "merchant's search cannot use its index for Japanese words.",
                    hint="Create the database with a UTF-8 ctype: "
                    "CREATE DATABASE … LC_CTYPE 'C.UTF-8' TEMPLATE template0.",
                    warning=True,
                )
            )
    return check_messages(warnings)
