"""The product catalogue and the record of every stock movement."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from .search_keys import normalize


class ProductQuerySet(models.QuerySet):
    def in_stock(self):
        """What agents may find and buy: active, with stock."""
        return self.filter(active=True, inventory_count__gt=0)


class Product(models.Model):
    """A product as the seed shows it: price in cents of a yen (198000 = ¥1,980), stock never negative."""

    sku = models.CharField(_("SKU"), max_length=64)
    name = models.CharField(_("name"), max_length=200)
    description = models.TextField(_("description"), blank=True)
    price_cents = models.PositiveBigIntegerField(
        _("price (1/100 yen)"), help_text=_("Price in 1/100 yen, as the seed stores it (198000 = ¥1,980).")
    )
    inventory_count = models.IntegerField(_("stock"), default=0)
    category = models.CharField(_("category"), max_length=100, blank=True)
    brand = models.CharField(_("brand"), max_length=100, blank=True)
    # The seed's image URLs are site-relative ("/assets/…"), so not a URLField.
    image_url = models.CharField(_("image URL"), max_length=500, blank=True)
    refund_period_days = models.PositiveIntegerField(_("refund period (days)"), default=30)
    keywords = models.CharField(
        _("keywords"), max_length=500, blank=True, help_text=_("Space-separated search words (かわいい グッズ …).")
    )
    active = models.BooleanField(_("active"), default=True)
    # Derived from name, description, category, brand and keywords by `search_keys.normalize`; indexed
    # by FTS5 trigram (SQLite) or pg_trgm GIN (PostgreSQL), see migration 0001.
    search_key = models.TextField(_("search key"), blank=True, editable=False)
    # The name alone, folded the same way: the search re-ranks its candidates by their names without folding 100
    # names per query.
    name_key = models.CharField(_("name key"), max_length=200, blank=True, editable=False)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    objects = ProductQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sku"], name="merchant_product_sku_unique"),
            models.CheckConstraint(condition=Q(inventory_count__gte=0), name="merchant_product_inventory_not_negative"),
            models.CheckConstraint(condition=~Q(sku=""), name="merchant_product_sku_not_empty"),
        ]
        # No index on (active, inventory_count): nearly every product is in stock, and such an index
        # lures SQLite's planner away from the rowid scan that stops at LIMIT (several times slower).
        ordering = ["id"]
        verbose_name = _("product")
        verbose_name_plural = _("products")

    def __str__(self) -> str:
        return f"{self.name} ({self.sku})"

    SEARCH_KEY_FIELDS = ("search_key", "name_key")
    # What a product listing (search_products, completion) reads; loading only these skips the long search key.
    LISTED_FIELDS = (
        "id", "sku", "name", "description", "price_cents", "inventory_count", "category", "brand", "image_url",
        "refund_period_days", "keywords", "active",
    )  # fmt: skip

    def save(self, *args, **kwargs):
        self.search_keys_refresh()
        update_fields = kwargs.get("update_fields")
        if update_fields is not None:
            kwargs["update_fields"] = [*dict.fromkeys([*update_fields, *self.SEARCH_KEY_FIELDS])]
        super().save(*args, **kwargs)

    @property
    def keyword_list(self) -> list[str]:
        return self.keywords.split()

    def search_keys_refresh(self) -> None:
        """Derive `search_key` and `name_key` from the fields they fold (save() does it; bulk writes must)."""
        self.search_key = normalize(" ".join([self.name, self.description, self.category, self.brand, self.keywords]))
        self.name_key = normalize(self.name)


class InventoryMovement(models.Model):
    """One change of a product's stock: a sale, a restock or a correction. History is never edited."""

    class Reason(models.TextChoices):
        SALE = "sale", _("Sale")
        RESTOCK = "restock", _("Restock")
        CORRECTION = "correction", _("Correction (stock count)")

    product = models.ForeignKey(Product, on_delete=models.CASCADE, related_name="movements", verbose_name=_("product"))
    delta = models.IntegerField(_("change"))
    reason = models.CharField(_("reason"), max_length=20, choices=Reason.choices)
    balance_after = models.IntegerField(_("stock after"))
    note = models.CharField(_("note"), max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, verbose_name=_("by")
    )
    created_at = models.DateTimeField(_("when"), auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~Q(delta=0), name="merchant_movement_delta_not_zero"),
            models.CheckConstraint(condition=Q(balance_after__gte=0), name="merchant_movement_balance_not_negative"),
        ]
        ordering = ["-created_at", "-id"]
        verbose_name = _("inventory movement")
        verbose_name_plural = _("inventory movements")

    def __str__(self) -> str:
        return f"{self.product.sku} {self.delta:+d} ({self.get_reason_display()})"
