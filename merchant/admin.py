"""Merchandiser admin: catalogue with stock status and Japanese-aware search; stock changes go through services."""

from __future__ import annotations

from decimal import Decimal

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from mcpsite.admin_export import CsvExportMixin
from mcpsite.admin_pages import model_page
from mcpsite.admin_security import ReadOnlyModelAdmin, StaffModelAdmin
from mcpsite.core.errors import ApplicationError

from . import services
from .forms import CENTS_PER_YEN, ProductForm, StockAdjustmentForm, yen_text
from .models import InventoryMovement, Product
from .search_keys import normalize
from .selectors import LOW_STOCK


class StockFilter(admin.SimpleListFilter):
    title = _("stock")
    parameter_name = "stock"

    def lookups(self, request, model_admin):
        return [
            ("out", gettext("Out of stock")),
            ("low", gettext("Low (1–%(low)d)") % {"low": LOW_STOCK}),
            ("ok", gettext("In stock (> %(low)d)") % {"low": LOW_STOCK}),
        ]

    def queryset(self, request, queryset):
        return {
            "out": lambda: queryset.filter(inventory_count=0),
            "low": lambda: queryset.filter(inventory_count__gt=0, inventory_count__lte=LOW_STOCK),
            "ok": lambda: queryset.filter(inventory_count__gt=LOW_STOCK),
        }.get(self.value() or "", lambda: queryset)()


class MovementInline(admin.TabularInline):
    model = InventoryMovement
    extra = 0
    can_delete = False
    fields = ["created_at", "reason", "delta", "balance_after", "note", "created_by"]
    readonly_fields = fields  # type: ignore[assignment]  # the same names (django-stubs types the two apart)
    ordering = ["-created_at", "-id"]
    max_num = 0

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Product)
class ProductAdmin(CsvExportMixin, StaffModelAdmin):
    form = ProductForm
    export_columns = [
        "sku", "name", "category", "brand", ("price_cents", _("price (yen)")), "inventory_count", "active",
    ]  # fmt: skip
    export_yen_columns = [4]

    def export_rows(self, queryset):
        header, rows = super().export_rows(queryset)
        return header, ([*row[:4], Decimal(row[4]) / CENTS_PER_YEN, *row[5:]] for row in map(list, rows))

    list_display = ["sku", "name", "price_yen", "stock", "category", "brand", "active"]
    list_filter = [StockFilter, "active", "category", "brand"]
    search_fields = ["sku", "name", "brand", "category", "keywords"]
    list_per_page = 50
    actions = ["record_one_sale"]
    inlines = [MovementInline]
    fields = [
        "sku",
        "name",
        "description",
        "price",
        "inventory_count",
        "category",
        "brand",
        "image_url",
        "refund_period_days",
        "keywords",
        "active",
    ]

    @admin.display(description=_("price"), ordering="price_cents")
    def price_yen(self, obj: Product) -> str:
        return yen_text(obj.price_cents)

    @admin.display(description=_("stock"), ordering="inventory_count")
    def stock(self, obj: Product):
        tone = "tone-bad" if obj.inventory_count == 0 else ("tone-warn" if obj.inventory_count <= LOW_STOCK else "")
        url = reverse("admin:merchant_product_adjust_stock", args=[obj.pk])
        return format_html(
            '<span class="{}">{}</span> <a href="{}">{}</a>', tone, obj.inventory_count, url, gettext("adjust")
        )

    def get_readonly_fields(self, request, obj=None):
        # Stock changes of an existing product are recorded movements (the Adjust stock page).
        return ["inventory_count"] if obj is not None else []

    def get_search_results(self, request, queryset, search_term):
        """The usual fields, plus the normalised key: ﾑｷﾞﾎﾞｰ and カレンダ find むぎぼーカレンダー."""
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        key = normalize(search_term)
        if key:
            results |= queryset.filter(search_key__contains=key)
        return results, may_have_duplicates

    def get_urls(self):
        custom = [
            path(
                "<int:pk>/adjust-stock/",
                self.admin_site.admin_view(self.adjust_stock_view),
                name="merchant_product_adjust_stock",
            ),
        ]
        return custom + super().get_urls()

    def adjust_stock_view(self, request, pk: int):
        product = get_object_or_404(Product, pk=pk)
        if not self.has_change_permission(request, product):
            raise PermissionDenied
        form = StockAdjustmentForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            reason, quantity, note = (
                form.cleaned_data["reason"],
                form.cleaned_data["quantity"],
                form.cleaned_data["note"],
            )
            try:
                if reason == InventoryMovement.Reason.CORRECTION:
                    services.inventory_set(product_id=pk, count=quantity, note=note, actor=request.user)
                else:
                    delta = -quantity if reason == InventoryMovement.Reason.SALE else quantity
                    services.inventory_adjust(product_id=pk, delta=delta, reason=reason, note=note, actor=request.user)
            except ApplicationError as exc:
                form.add_error(None, exc.human)
            else:
                product.refresh_from_db()
                self.message_user(
                    request,
                    gettext("%(sku)s: stock is now %(count)d.")
                    % {"sku": product.sku, "count": product.inventory_count},
                    messages.SUCCESS,
                )
                return redirect("admin:merchant_product_change", pk)
        return model_page(
            self,
            request,
            "admin/merchant/product/adjust_stock.html",
            title=gettext("Adjust stock: %(name)s") % {"name": product.name},
            original=product,
            form=form,
            movements=product.movements.select_related("created_by")[:10],
        )

    @admin.action(description=_("Record a sale of one unit"), permissions=["change"])
    def record_one_sale(self, request, queryset):
        sold, refused = [], []
        for product in queryset.order_by("pk"):
            try:
                services.inventory_adjust(product_id=product.pk, delta=-1, reason="sale", actor=request.user)
                sold.append(product.sku)
            except ApplicationError:
                refused.append(product.sku)
        if sold:
            self.message_user(request, gettext("Sale recorded: %(skus)s") % {"skus": ", ".join(sold)}, messages.SUCCESS)
        if refused:
            self.message_user(
                request,
                gettext("Out of stock, nothing recorded: %(skus)s") % {"skus": ", ".join(refused)},
                messages.WARNING,
            )


@admin.register(InventoryMovement)
class InventoryMovementAdmin(CsvExportMixin, ReadOnlyModelAdmin):
    export_columns = [
        "created_at",
        "product__sku",
        "product__name",
        "reason",
        "delta",
        "balance_after",
        "note",
        "created_by__username",
    ]
    list_display = ["created_at", "product", "reason", "delta", "balance_after", "created_by", "note"]
    list_filter = ["reason"]
    search_fields = ["product__sku", "product__name", "note"]
    list_select_related = ["product", "created_by"]
