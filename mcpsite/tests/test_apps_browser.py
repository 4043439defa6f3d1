"""MCP Apps views in Chromium through a real host: the test host of appshost.py (ext-apps' AppBridge and the official
TypeScript client, bundled by esbuild) against one live server per module, each view in the sandbox proxy's
srcdoc iframe under the CSP its resource declares.

The first tests prove the host itself on a test-only view (apps_probe.py): the view initializes with the host's
locale, receives the call's input and result, calls a tool through the host; hostile text written as HTML is caught
(the control of the views' hostile-name tests); and the view's document cannot reach another origin. Then each of
the three views is driven as a person would, through the DOM hooks docs/mcp-apps.md lists, and checked in the
site's database.

The screenshots in docs/mcp-apps.md are these tests' (each view in Japanese and English). To regenerate them:

    DOCS_IMAGES=docs/images .venv/bin/pytest mcpsite/tests/test_apps_browser.py -k screenshots
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .appshost import ELSEWHERE, AppsHost
from .live import live_site

pytestmark = [pytest.mark.slow]

# A film, a product and a contact named to inject markup; each view must show the name as text.
HOSTILE = '<img src=x onerror=console.error("XSS-img")><script>console.error("XSS-script")</script>'

# The site's data: shows of one theater (two seats not for sale, three sold on apps2), two contacts and three
# products of the key's owner (a mug with one left); prints the products' and the shows' primary keys.
SETUP = """
import datetime
import json
from django.contrib.auth import get_user_model
from django.utils import timezone
from cinema.models import Movie, Schedule, Theater
from cinema import services
theater = services.theater_set_layout(
    theater=Theater.objects.create(name="シアターA", rows=5, columns=8), rows=5, columns=8, blocked={{"E1", "E8"}})
day = timezone.localdate() + datetime.timedelta(days=1)
for hour, (public_id, title) in enumerate([("apps0", "スタームービー"), ("apps1", "スタームービー"),
                                          ("apps2", "スタームービー"), ("hostile0", {hostile!r}),
                                          ("apps3", "スタームービー")]):
    movie = Movie.objects.create(title=title, rating=4.5, duration=120)
    Schedule.objects.create(movie=movie, theater=theater, public_id=public_id, date=day,
                            start_time=datetime.time(9 + 3 * hour))
services.reservation_create(schedule_id="apps2", seats=["C4", "C5", "D4"], password="somebody")
from merchant.models import Product
from reminders.models import Contact
owner = get_user_model().objects.get(username="interop")
Contact.objects.create(owner=owner, name="山田花子", email="hanako@example.com")
Contact.objects.create(owner=owner, name={hostile!r}, email="hostile@example.com")
products = [Product.objects.create(sku=sku, name=name, price_cents=cents, inventory_count=stock)
            for sku, name, cents, stock in [("TEA-1", "抹茶ラテ", 198000, 50), ("MUG-2", "マグカップ", 120000, 1),
                                            ("BAD-3", {hostile!r}, 50000, 9)]]
print(json.dumps({{"products": [p.pk for p in products],
                  "shows": dict(Schedule.objects.values_list("public_id", "pk"))}}))
"""
SELL = """
from cinema import services
services.reservation_create(schedule_id={show!r}, seats={seats!r}, password="other-person")
"""


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    with live_site(live_template, tmp_path_factory.mktemp("apps-browser")) as site:
        made = json.loads(site.shell(SETUP.format(hostile=HOSTILE)))
        site.products, site.shows = made["products"], made["shows"]
        # The module's views send more than a key's default 100 requests a minute when nothing else slows them.
        site.key, _pk = site.create_api_key(
            "apps-browser", "--scopes", "all", "--owner", "interop", "--rate", "100000/m"
        )
        site.start_server(MCPSITE_TEST_APPS_PROBE="1", MCP_AUDIT_FLUSH_SECONDS="0")
        yield site


@pytest.fixture
def host_for(site, apps_browser):
    """host_for(locale="ja-JP", width=900) -> an AppsHost in a fresh browser context asking for `locale`, its view
    `width` CSS pixels wide."""
    contexts = []

    def make(locale: str = "ja-JP", width: int = 900) -> AppsHost:
        context = apps_browser.get().new_context(locale=locale, viewport={"width": width, "height": 900})
        contexts.append(context)
        return AppsHost(context, site.urls[0], site.key, locale=locale)

    yield make
    for context in contexts:
        context.close()


def injected(host: AppsHost) -> list[str]:
    """Elements of the view made from hostile text, and any script it ran."""
    found = host.view_frame().evaluate(
        """[...document.querySelectorAll('img, [onerror], script')]
            .filter((e) => e.tagName !== 'SCRIPT' || e.textContent.includes('XSS')).map((e) => e.outerHTML)"""
    )
    ran = [line for line in host.console if "XSS" in line]
    return found + ran + host.dialogs


def test_the_host_renders_a_view_and_proxies_its_tool_calls(host_for):
    host = host_for("en-US")
    opened = host.open("test_ui_probe", {"text": "映画"})
    assert opened["uri"] == "ui://mcpsite-test/probe.html"
    assert opened["result"]["structuredContent"] == {"echo": "映画"}
    view = host.view
    expect(view.locator("#locale")).to_have_text("en-US")
    expect(view.locator("#result")).to_have_text("映画")
    view.locator("#call").click()
    expect(view.locator("#called")).to_have_text("viewview", timeout=15_000)  # tools/call through AppBridge
    assert host.events("initialized")[0]["app"] == {"name": "probe", "version": "1.0.0"}
    assert host.errors == []


@pytest.mark.parametrize("unsafe", [False, True], ids=["text", "control-innerHTML"])
def test_hostile_text_is_caught_when_a_view_writes_it_as_html(host_for, unsafe):
    host = host_for()
    host.open("test_ui_probe", {"text": HOSTILE, "unsafe": unsafe})
    result = host.view.locator("#result")
    if unsafe:
        expect(result.locator("img")).to_have_count(1)
        assert injected(host)
    else:
        expect(result).to_have_text(HOSTILE)
        assert injected(host) == []


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("test_ui_probe", {"text": "csp"}),
        ("get_seat_availability", {"schedule_id": "apps2"}),
        ("build_cart_mandates", "cart"),
        ("message.send", {"to": "山田花子", "text": "csp"}),
    ],
    ids=["probe", "seat-picker", "cart-review", "message-card"],
)
def test_the_view_cannot_reach_another_origin(site, host_for, tool, arguments):
    """The sandbox's CSP (the view declares no domain): fetch, image, script, style and frame requests from the
    view to another origin are blocked before they are made; the same fetch from the host page (the control)
    arrives."""
    host = host_for()
    if arguments == "cart":
        arguments = cart_arguments([(site.products[0], 1)])
    opened = host.open(tool, arguments)
    assert opened["csp"] and not any(opened["csp"].values())  # declared, and empty
    assert "connect-src 'none'" in host.csp_served[-1]
    violations = host.view_frame().evaluate(
        """async (elsewhere) => {
            const seen = [];
            document.addEventListener('securitypolicyviolation', (e) => seen.push(e.effectiveDirective));
            const fetched = await fetch(`${elsewhere}/fetch`).then(() => 'loaded', () => 'blocked');
            for (const [tag, attribute, path] of [['img', 'src', 'img'], ['script', 'src', 'script'],
                                                  ['link', 'href', 'style'], ['iframe', 'src', 'frame']]) {
                const element = document.createElement(tag);
                if (tag === 'link') element.rel = 'stylesheet';
                element.setAttribute(attribute, `${elsewhere}/${path}`);
                document.body.appendChild(element);
            }
            for (let waited = 0; waited < 10000 && new Set(seen).size < 5; waited += 100) {
                await new Promise((resolve) => setTimeout(resolve, 100));  // the reports are queued as tasks
            }
            return { fetched, seen: [...new Set(seen)].sort() };
        }""",
        ELSEWHERE,
    )
    assert violations["fetched"] == "blocked"
    assert violations["seen"] == ["connect-src", "frame-src", "img-src", "script-src-elem", "style-src-elem"]
    assert host.elsewhere == []
    assert host.page.evaluate("(url) => fetch(url).then((r) => r.text())", f"{ELSEWHERE}/control") == "x"
    assert host.elsewhere == [f"{ELSEWHERE}/control"]


def shoot(host: AppsHost, tmp_path, name: str) -> None:
    """The view's iframe as the person sees it, saved as `name` (and into DOCS_IMAGES when set)."""
    host.page.wait_for_timeout(300)  # the size-changed round trip settles the iframe's height
    path = tmp_path / name
    host.page.locator("#view").screenshot(path=str(path))
    if images := os.environ.get("DOCS_IMAGES"):
        (Path(images) / name).write_bytes(path.read_bytes())


def test_seat_picker_books_two_seats_with_the_password_typed_in_the_view(site, host_for):
    host = host_for()
    host.open("get_seat_availability", {"schedule_id": "apps0"})
    view = host.view
    expect(view.locator("body")).to_have_attribute("data-state", "ready")
    view.get_by_test_id("seat-B3").click()
    view.get_by_test_id("seat-B4").click()
    view.get_by_test_id("reservation-password").fill("secret12")
    view.get_by_test_id("book").click()
    expect(view.locator("body")).to_have_attribute("data-state", "booked", timeout=20_000)
    for seat in ("B3", "B4"):  # the map re-read from the database after the booking
        expect(view.get_by_test_id(f"seat-{seat}")).to_have_attribute("data-status", "reserved")
    show = site.shows["apps0"]
    assert site.count("cinema_reservation", schedule_id=show, status="confirmed") == 1
    assert site.count("cinema_reservedseat", schedule_id=show, active=True) == 2  # B3 and B4, reserved on the map
    assert host.errors == []
    # The password went from the field into reserve_seats only: nothing the view told the host (for the model) has it.
    told = host.page.evaluate("JSON.stringify(window.appsHost.events)")
    assert host.events("model-context") and "secret12" not in told


@pytest.mark.parametrize(
    ("locale", "show", "said"),
    [
        ("en-US", "apps1", "Someone else took seat C6 meanwhile. The map has been refreshed; choose again."),
        ("ja-JP", "apps3", "他の方が先に C6 を予約しました。座席表を更新しました。選び直してください。"),
    ],
)
def test_seat_picker_shows_the_409_of_a_seat_sold_meanwhile_and_refreshes(site, host_for, locale, show, said):
    """The conflict names the seat taken in the host's language (not the seed's English error text)."""
    host = host_for(locale)
    host.open("get_seat_availability", {"schedule_id": show})
    view = host.view
    expect(view.locator("body")).to_have_attribute("data-state", "ready")
    view.get_by_test_id("seat-C5").click()
    view.get_by_test_id("seat-C6").click()
    site.shell(SELL.format(show=show, seats=["C6"]))  # someone else, between render and click
    view.get_by_test_id("reservation-password").fill("secret12")
    view.get_by_test_id("book").click()
    expect(view.locator("body")).to_have_attribute("data-state", "conflict", timeout=20_000)
    expect(view.get_by_test_id("error")).to_have_text(said)
    expect(view.get_by_test_id("seat-C6")).to_have_attribute("data-status", "reserved")  # the map was refreshed
    expect(view.get_by_test_id("seat-C5")).to_have_attribute("data-status", "available")  # nothing half-booked
    assert site.count("cinema_reservedseat", schedule_id=site.shows[show], active=True) == 1  # C6, the other's


def test_seat_picker_by_keyboard(host_for):
    """One tab stop into the grid; arrows move between seats (skipping none), Enter and Space toggle a seat; the
    seats are labelled for screen readers."""
    host = host_for("en-US")
    host.open("get_seat_availability", {"schedule_id": "apps2"})
    view = host.view
    expect(view.locator("body")).to_have_attribute("data-state", "ready")
    view.get_by_test_id("seat-A1").focus()
    host.page.keyboard.press("ArrowRight")
    host.page.keyboard.press("Enter")
    host.page.keyboard.press("ArrowDown")
    host.page.keyboard.press("Space")
    expect(view.get_by_test_id("seat-A2")).to_have_attribute("aria-pressed", "true")
    expect(view.get_by_test_id("seat-B2")).to_have_attribute("aria-pressed", "true")
    expect(view.get_by_test_id("selection")).to_contain_text("A2, B2")
    expect(view.get_by_test_id("seat-C4")).to_have_attribute("aria-label", "Seat C4, Reserved")
    assert view.locator(".grid .seat[tabindex='0']").count() == 1


def test_seat_picker_shows_a_hostile_film_title_as_text(host_for):
    host = host_for()
    host.open("get_seat_availability", {"schedule_id": "hostile0"})
    expect(host.view.get_by_test_id("show-title")).to_have_text(HOSTILE)
    assert injected(host) == []
    assert [line for line in host.console if line.startswith("error")] == []


def cart_arguments(items: list[tuple[int, int]], agent_prices: dict[int, int] | None = None) -> dict:
    """build_cart_mandates' arguments: (product id, quantity) lines, and the agent's own idea of the prices."""
    prices = agent_prices or {}
    return {
        "cart_plan": {"items": [{"product_id": pk, "quantity": quantity} for pk, quantity in items]},
        "products": [{"id": pk, **({"price_jpy": prices[pk]} if pk in prices else {})} for pk, _quantity in items],
    }


def test_cart_review_shows_the_database_price_not_the_agents(site, host_for):
    tea, _mug, _bad = site.products
    host = host_for()
    host.open("build_cart_mandates", cart_arguments([(tea, 2)], agent_prices={tea: 1}))
    view = host.view
    expect(view.locator("body")).to_have_attribute("data-state", "ready")
    line = view.get_by_test_id("cart-line")
    expect(line).to_have_count(1)
    expect(line).to_have_attribute("data-product-id", str(tea))
    expect(line.get_by_test_id("line-unit-price")).to_have_attribute("data-value", "1980")
    expect(line.get_by_test_id("line-total")).to_have_attribute("data-value", "3960")
    expect(line.get_by_test_id("line-warning")).to_contain_text("￥1,980")  # the agent's ￥1 was ignored
    expect(view.get_by_test_id("subtotal")).to_have_attribute("data-value", "3960")


def test_cart_review_shows_a_hostile_product_name_as_text_and_stock_per_line(site, host_for):
    _tea, mug, bad = site.products
    host = host_for()
    host.open("build_cart_mandates", cart_arguments([(bad, 1), (mug, 3)]))
    view = host.view
    expect(view.locator("body")).not_to_have_attribute("data-state", "waiting")
    problem = view.get_by_test_id("stock-problem")
    expect(problem).to_have_attribute("data-product-id", str(mug))
    expect(problem).to_have_attribute("data-available", "1")
    host.open("build_cart_mandates", cart_arguments([(bad, 1)]))
    expect(host.view.get_by_test_id("line-name")).to_contain_text(HOSTILE)
    assert injected(host) == []
    assert [line for line in host.console if line.startswith("error")] == []


def messages(site, text: str) -> int:
    return site.count("reminders_message", text=text)


def test_message_card_cancel_sends_nothing(site, host_for):
    host = host_for()
    host.open("message.send", {"to": "山田花子", "text": "card cancel"})
    view = host.view
    expect(view.get_by_test_id("recipient")).to_have_text("山田花子")
    expect(view.get_by_test_id("message-text")).to_have_text("card cancel")
    view.get_by_test_id("cancel").click()
    expect(view.locator("body")).to_have_attribute("data-state", "cancelled")
    host.page.wait_for_timeout(500)  # a call the view should not have made would have landed by now
    assert host.called == ["message.send"]  # the host's call only: the view called nothing
    assert messages(site, "card cancel") == 0


def test_message_card_send_sends_once_even_when_clicked_twice(site, host_for):
    host = host_for("en-US")
    host.open("message.send", {"to": "山田花子", "text": "card send"})
    view = host.view
    assert messages(site, "card send") == 0  # the card is showing: nothing is sent yet
    view.get_by_test_id("send").dblclick()
    expect(view.locator("body")).to_have_attribute("data-state", "sent", timeout=20_000)
    expect(view.get_by_test_id("card-status")).to_contain_text("msg_")
    host.page.wait_for_timeout(500)
    assert host.called == ["message.send", "message.confirm_send"]  # one call from the view, not two
    assert messages(site, "card send") == 1


def test_message_card_shows_a_hostile_contact_name_as_text(site, host_for):
    host = host_for()
    host.open("message.send", {"to": HOSTILE, "text": "hostile"})
    expect(host.view.get_by_test_id("recipient")).to_have_text(HOSTILE)
    assert injected(host) == []
    assert [line for line in host.console if line.startswith("error")] == []
    assert messages(site, "hostile") == 0


# Where each row's letter and its first and last seats are, in the seat grid's own box, with the grid scrolled to
# its start and then to its end.
GRID_EDGES = """() => {
  const grid = document.getElementById("seat-grid");
  const at = (scroll) => {
    grid.scrollLeft = scroll;
    const box = (node) => { const r = node.getBoundingClientRect(); return [r.left, r.right]; };
    const outer = grid.getBoundingClientRect();
    return {
      grid: [outer.left, outer.right],
      rows: [...grid.querySelectorAll(".row")].map((row) => {
        const seats = row.querySelectorAll(".seat");
        return { head: box(row.querySelector(".rowhead")), first: box(seats[0]), last: box(seats[seats.length - 1]) };
      }),
    };
  };
  return { start: at(0), end: at(grid.scrollWidth) };
}"""


def _inside(box: list[float], outer: list[float]) -> bool:
    return box[0] >= outer[0] - 0.5 and box[1] <= outer[1] + 0.5


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("width", [320, 375])
def test_the_seat_picker_on_a_phone_reaches_every_row_letter_and_seat(host_for, width, lang):
    """Scrolled to its start the grid shows every row's letter and seat 1; scrolled to its end, the last seats, with
    the row letters still in view; the page itself does not scroll sideways."""
    host = host_for("ja-JP" if lang == "ja" else "en-US", width=width)
    host.open("get_seat_availability", {"schedule_id": "apps2"})
    expect(host.view.locator("body")).to_have_attribute("data-state", "ready")
    edges = host.view_frame().evaluate(GRID_EDGES)
    for moment in ("start", "end"):
        grid = edges[moment]["grid"]
        assert all(_inside(row["head"], grid) for row in edges[moment]["rows"]), (moment, edges)
    assert all(_inside(row["first"], edges["start"]["grid"]) for row in edges["start"]["rows"]), edges
    assert all(_inside(row["last"], edges["end"]["grid"]) for row in edges["end"]["rows"]), edges
    assert host.view_frame().evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("width", [320, 375])
def test_the_cart_review_on_a_phone_stacks_its_lines_in_the_hosts_language(site, host_for, width, lang):
    tea, mug, _bad = site.products
    host = host_for("ja-JP" if lang == "ja" else "en-US", width=width)
    address = {"recipient": "山田花子", "postalCode": "100-0001", "region": "東京都", "city": "千代田区",
               "addressLine": ["千代田1-1"], "country": "JP"}  # fmt: skip
    host.open("build_cart_mandates", {**cart_arguments([(tea, 2), (mug, 1)], {tea: 1}), "shipping_address": address})
    view = host.view
    expect(view.locator("body")).to_have_attribute("data-state", "ready")
    yen = "￥1,980" if lang == "ja" else "¥1,980"
    expect(view.get_by_test_id("line-unit-price").first).to_contain_text(yen)
    warning = view.get_by_test_id("line-warning")
    expect(warning).to_have_text(
        f"抹茶ラテ: エージェントが示した価格 ￥1 ではなく、ショップの価格 {yen} で計算しています。"
        if lang == "ja"
        else f"抹茶ラテ: your agent's price ¥1 was ignored; the shop's price {yen} is used."
    )
    ship_to = {"ja": "〒100-0001 東京都千代田区千代田1-1 山田花子 様",
               "en": "山田花子, 千代田1-1, 千代田区 東京都 100-0001, JP"}  # fmt: skip
    expect(view.get_by_test_id("ship-to")).to_have_text(ship_to[lang])
    # Each line stacks: its name has the view's width (not a column broken every character), nothing overflows.
    name_width = view.get_by_test_id("line-name").first.bounding_box()["width"]
    assert name_width > width * 0.6
    assert host.view_frame().evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_cart_reviews_stock_problem_names_the_product_above_its_table(site, host_for):
    _tea, mug, _bad = site.products
    host = host_for("ja-JP", width=320)
    host.open("build_cart_mandates", cart_arguments([(mug, 3)]))
    view = host.view
    expect(view.locator("body")).to_have_attribute("data-state", "error")
    expect(view.get_by_test_id("problem-name")).to_have_text("マグカップ")
    message = view.get_by_test_id("error").bounding_box()
    table = view.get_by_test_id("stock-problem").bounding_box()
    assert message["y"] + message["height"] <= table["y"]
    expect(view.get_by_test_id("error")).to_have_text("在庫が足りない商品があります:")


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_screenshots_of_the_three_views(site, host_for, tmp_path, lang):
    """docs/images/mcp-apps-<view>-<lang>.png: each view as a host shows it, in the host's language."""
    host = host_for("ja-JP" if lang == "ja" else "en-US")
    host.open("get_seat_availability", {"schedule_id": "apps2"})
    view = host.view
    expect(view.locator("body")).to_have_attribute("data-state", "ready")
    view.get_by_test_id("seat-B4").click()
    view.get_by_test_id("seat-B5").click()
    shoot(host, tmp_path, f"mcp-apps-seat-picker-{lang}.png")
    tea, mug, _bad = site.products
    host.open("build_cart_mandates", cart_arguments([(tea, 2), (mug, 1)], agent_prices={tea: 1}))
    expect(host.view.locator("body")).to_have_attribute("data-state", "ready")
    shoot(host, tmp_path, f"mcp-apps-cart-review-{lang}.png")
    host.open("message.send", {"to": "山田花子", "text": "明日18時の回、B4とB5を取りました。"})
    expect(host.view.get_by_test_id("send")).to_be_visible()
    shoot(host, tmp_path, f"mcp-apps-message-card-{lang}.png")
    print(f"screenshots: {tmp_path}")
