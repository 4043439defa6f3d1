"""The domain's messages a person reads are in the page's language; what tools return stays the seeds' English.

Every `Message(gettext_noop(...))` in the project has a Japanese translation in the catalogue (found by reading the
source, so a new message without one fails here), and each message path of the issue, raised under Japanese, reads
in Japanese on a staff page (`exc.human`) while its `detail`, what the tools send, is the English text unchanged.
"""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone, translation

from mcpsite.core.errors import ApplicationError, Message

ROOT = Path(settings.BASE_DIR)
APPS = ["cinema", "ledger", "merchant", "reminders", "geo", "mcpsite", "mcpsite_oauth"]


def message_templates() -> list[tuple[str, str]]:
    """(file, template) of every Message(gettext_noop("…")) (or its alias) in the project's code."""
    found = []
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "tests" in path.parts or "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "gettext_noop"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):
                    found.append((str(path.relative_to(ROOT)), node.args[0].value))
    return found


def test_every_message_has_a_japanese_translation():
    templates = message_templates()
    assert len(templates) > 30
    with translation.override("ja"):
        missing = [(where, t) for where, t in templates if translation.gettext(t) == t]
    assert missing == []


def raised(call) -> ApplicationError:
    with pytest.raises(ApplicationError) as info:
        call()
    return info.value


def japanese(exc: ApplicationError) -> str:
    with translation.override("ja"):
        return exc.human


def test_a_message_is_its_english_text_for_tools_byte_for_byte():
    text = Message("Only %(available)s in stock; cannot take %(requested)s", available=5, requested=7)
    assert text == "Only 5 in stock; cannot take 7" and type(str(text)) is str
    import json

    assert json.dumps({"message": text}, ensure_ascii=False) == '{"message": "Only 5 in stock; cannot take 7"}'


def test_ledger_messages_read_in_japanese_and_stay_english_for_tools():
    from ledger import services
    from ledger.services import LineInput

    one = raised(lambda: services.journal_lines_validate(lines=[LineInput("100", Decimal(1), Decimal(0))]))
    assert one.detail == "A journal entry needs at least 2 lines (got 1)"
    assert japanese(one) == "仕訳には2行以上が必要です（1 行）"
    lines = [LineInput("100", Decimal(100), Decimal(0)), LineInput("400", Decimal(0), Decimal(90))]
    unbalanced = raised(lambda: services.journal_balance_validate(lines=lines))
    assert unbalanced.detail == "Debits and credits do not balance: debits 100 ≠ credits 90 (debits exceed by 10)"
    assert japanese(unbalanced) == "借方と貸方が一致しません: 借方 100 ≠ 貸方 90（借方 が 10 多い）"


def test_cinema_layout_messages_read_in_japanese():
    from cinema import services

    rows = raised(lambda: services.theater_layout_validate(theater=None, rows=27, columns=5))
    assert rows.detail == "rows must be between 1 and 26" and japanese(rows) == "行数は 1〜26 にしてください"


@pytest.mark.django_db
def test_the_theater_form_shows_no_raw_constraint_name(admin_client):
    page = admin_client.post("/admin/cinema/theater/add/", {"name": "大", "rows": "27", "columns": "5"})
    text = page.content.decode()
    assert page.status_code == 200 and "cinema_theater_rows_1_26" not in text and "行数は 1〜26 にしてください" in text


@pytest.mark.django_db
def test_stock_and_resend_messages_read_in_japanese(django_user_model):
    from merchant import services as merchant_services
    from merchant.models import Product
    from reminders import services as reminder_services
    from reminders.models import Contact
    from reminders.models import Message as ReminderMessage

    product = Product.objects.create(sku="X-1", name="マグ", price_cents=198000, inventory_count=5)
    short = raised(lambda: merchant_services.inventory_adjust(product_id=product.pk, delta=-7, reason="sale"))
    assert short.detail == "Only 5 in stock; cannot take 7"
    assert japanese(short) == "在庫は 5 点しかないため、7 点は引き当てられません"

    owner = django_user_model.objects.create_user("owner", password="x" * 12)
    contact = Contact.objects.create(owner=owner, name="山田花子", email="hanako@example.com")
    sent = ReminderMessage.objects.create(
        owner=owner,
        contact=contact,
        platform="email",
        address=contact.email,
        text="こんにちは",
        status="sent",
        sent_at=timezone.now(),
    )
    resend = raised(lambda: reminder_services.message_resend(message=sent))
    assert resend.detail == f"Message {sent.public_id} is sent; only failed messages can be resent"
    assert japanese(resend) == f"メッセージ {sent.public_id} は「送信済」です。再送できるのは失敗したメッセージだけです"


def test_the_webhook_rule_reads_in_japanese():
    from reminders.webhooks import REFUSED

    assert REFUSED.startswith("Webhook URLs must point to a public internet host")
    with translation.override("ja"):
        assert REFUSED.translated().startswith("Webhook の URL はインターネット上の公開ホスト")
