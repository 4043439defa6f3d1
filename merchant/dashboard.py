"""The shop's blocks on the staff dashboard (mcpsite/dashboard.py): low stock, units sold per day."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse
from django.utils.translation import gettext

from mcpsite.dashboard import Block, Link, Viewer, changelist, daily_counts_chart, number

from . import selectors

LOW_STOCK_LISTED = 8
ACTIVITY_DAYS = 14


@dataclass(frozen=True, slots=True)
class StockBlock:
    out_of_stock: Link
    low: Link
    low_label: str
    products: list[tuple[object, str]]  # (product, its change page)


def stock_block(viewer: Viewer) -> Block | None:
    if not viewer.may("merchant.view_product"):
        return None
    stock = selectors.product_low_stock(limit=LOW_STOCK_LISTED)
    data = StockBlock(
        out_of_stock=Link(
            number(stock.out_of_stock), changelist("merchant.product", stock="out", active__exact=1), stock.out_of_stock
        ),
        low=Link(number(stock.low), changelist("merchant.product", stock="low", active__exact=1), stock.low),
        products=[(p, reverse("admin:merchant_product_change", args=[p.pk])) for p in stock.products],
        low_label=gettext("Low (1–%(low)d)") % {"low": selectors.LOW_STOCK},
    )
    return Block("dash-stock", gettext("Low stock"), "admin/dashboard/merchant_stock.html", data)


def sales_block(viewer: Viewer) -> Block | None:
    """Units sold per day (the shop's sale movements)."""
    if not viewer.may("merchant.view_inventorymovement"):
        return None
    title = gettext("Units sold, last %(days)d days") % {"days": ACTIVITY_DAYS}
    chart = daily_counts_chart(
        chart_id="sales",
        title=title,
        series=gettext("Units sold"),
        today=viewer.today,
        days=ACTIVITY_DAYS,
        counts=lambda since, until: selectors.sales_units_by_day(since=since, until=until),
        model="merchant.inventorymovement",
        field="created_at",
        lookups={"reason__exact": "sale"},
        counts_rows=False,
    )
    return Block("dash-sales", gettext("Sales"), "admin/dashboard/chart_block.html", chart)
