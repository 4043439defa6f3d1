"""Demo catalogue: the seed's products and a generator of synthetic ones for `--scale`."""

from __future__ import annotations

import random
from collections.abc import Iterator

from .models import Product

# (sku, name, description, price_cents, inventory, category, brand, image_url, refund_days, keywords, active)
SEED_PRODUCTS = [
    (
        "MUGIBO-CAL-2025",
        "むぎぼーカレンダー2025",
        "むぎぼーの可愛いカレンダー",
        198000,
        50,
        "goods",
        "むぎぼー",
        "/assets/むぎぼーカレンダー.png",
        30,
        "かわいい グッズ カレンダー 2025 壁掛け",
        True,
    ),
    (
        "MUGIBO-MUG",
        "むぎぼーマグカップ",
        "むぎぼーのイラスト入りマグカップ。電子レンジ対応",
        165000,
        30,
        "goods",
        "むぎぼー",
        "/assets/むぎぼーマグカップ.png",
        30,
        "かわいい グッズ 食器 マグ",
        True,
    ),
    (
        "MUGIBO-PLUSH-S",
        "むぎぼーぬいぐるみ（S）",
        "ふわふわのむぎぼー。手のひらサイズ",
        250000,
        0,
        "goods",
        "むぎぼー",
        "/assets/むぎぼーぬいぐるみ.png",
        30,
        "かわいい グッズ ぬいぐるみ ギフト",
        True,
    ),
    (
        "MUGIBO-TOTE",
        "むぎぼートートバッグ",
        "A4が入る帆布のトートバッグ",
        220000,
        20,
        "goods",
        "むぎぼー",
        "/assets/むぎぼートート.png",
        30,
        "かわいい グッズ バッグ エコバッグ",
        True,
    ),
    (
        "MUGIBO-HOODIE",
        "むぎぼーパーカー",
        "裏起毛のあたたかいパーカー。ユニセックス",
        350000,
        15,
        "apparel",
        "むぎぼー",
        "/assets/むぎぼーパーカー.png",
        14,
        "アパレル 服 冬",
        True,
    ),
    (
        "MUGIBO-STICKER",
        "むぎぼーステッカーセット",
        "耐水ステッカー5枚入り",
        50000,
        200,
        "goods",
        "むぎぼー",
        "/assets/むぎぼーステッカー.png",
        30,
        "かわいい グッズ シール 文房具",
        True,
    ),
    (
        "MUGIBO-KEYRING",
        "むぎぼーアクリルキーホルダー",
        "両面プリントのアクリルキーホルダー",
        80000,
        100,
        "goods",
        "むぎぼー",
        "/assets/むぎぼーキーホルダー.png",
        30,
        "かわいい グッズ キーホルダー",
        True,
    ),
    (
        "DESK-CAL-2025",
        "シンプル卓上カレンダー2025",
        "書き込みやすい卓上カレンダー。月曜始まり",
        120000,
        40,
        "stationery",
        "ノートワークス",
        "/assets/卓上カレンダー.png",
        30,
        "カレンダー 2025 文房具 オフィス",
        True,
    ),
    (
        "NOTE-A5-GRID",
        "A5方眼ノート",
        "5mm方眼、80枚。万年筆にも裏抜けしにくい紙",
        45000,
        80,
        "stationery",
        "ノートワークス",
        "/assets/方眼ノート.png",
        30,
        "文房具 ノート",
        True,
    ),
    (
        "TSHIRT-WHITE",
        "ベーシックTシャツ（白）",
        "綿100%の定番Tシャツ",
        198000,
        25,
        "apparel",
        "ベーシックス",
        "/assets/Tシャツ.png",
        14,
        "アパレル 服 夏",
        True,
    ),
    (
        "COFFEE-DRIP-10",
        "ドリップコーヒー10袋セット",
        "深煎りブレンドのドリップバッグ",
        128000,
        60,
        "food",
        "喫茶むぎ",
        "/assets/ドリップコーヒー.png",
        0,
        "コーヒー 食品 ギフト",
        True,
    ),
    (
        "MUGIBO-POSTER-2024",
        "むぎぼーポスター2024",
        "販売終了",
        90000,
        5,
        "goods",
        "むぎぼー",
        "/assets/むぎぼーポスター.png",
        30,
        "かわいい グッズ ポスター",
        False,
    ),
]

_ADJECTIVES = ["かわいい", "シンプルな", "大人の", "北欧風", "和柄の", "ふわふわ", "レトロな", "限定", "定番", "ミニ"]
_ITEMS = [
    ("マグカップ", "goods", "食器"),
    ("トートバッグ", "goods", "バッグ"),
    ("ノート", "stationery", "文房具"),
    ("ボールペン", "stationery", "文房具"),
    ("カレンダー", "stationery", "カレンダー"),
    ("Tシャツ", "apparel", "服"),
    ("パーカー", "apparel", "服"),
    ("ハンカチ", "goods", "雑貨"),
    ("クッション", "interior", "インテリア"),
    ("コーヒー豆", "food", "食品"),
    ("紅茶セット", "food", "ギフト"),
    ("キーホルダー", "goods", "グッズ"),
]
_BRANDS = ["ノートワークス", "ベーシックス", "喫茶むぎ", "ソラノイロ", "Hokuo Design", "和もよう堂"]
_COLORS = ["白", "黒", "青", "桜色", "抹茶", "グレー"]


def seed_products() -> Iterator[Product]:
    for sku, name, desc, price, stock, category, brand, image, refund, keywords, active in SEED_PRODUCTS:
        yield Product(
            sku=sku,
            name=name,
            description=desc,
            price_cents=price,
            inventory_count=stock,
            category=category,
            brand=brand,
            image_url=image,
            refund_period_days=refund,
            keywords=keywords,
            active=active,
        )


def synthetic_products(count: int, *, seed: int = 6) -> Iterator[Product]:
    """`count` reproducible products (sku GEN-000001…); about 1 in 10 out of stock."""
    rng = random.Random(seed)
    for i in range(1, count + 1):
        adjective, (item, category, word), color = rng.choice(_ADJECTIVES), rng.choice(_ITEMS), rng.choice(_COLORS)
        product = Product(
            sku=f"GEN-{i:06d}",
            name=f"{adjective}{item}（{color}）No.{i}",
            description=f"{rng.choice(_BRANDS)}の{item}。{color}のカラー。",
            price_cents=rng.randrange(300, 20000) * 100,
            inventory_count=0 if rng.random() < 0.1 else rng.randrange(1, 500),
            category=category,
            brand=rng.choice(_BRANDS),
            image_url=f"/assets/gen/{i}.png",
            refund_period_days=rng.choice([0, 14, 30]),
            keywords=f"{word} {adjective}",
            active=rng.random() > 0.02,
        )
        product.search_keys_refresh()  # bulk_create does not call save()
        yield product
