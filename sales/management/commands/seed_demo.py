"""Demo data for `make run`: loaded once, then left alone (re-running changes nothing)."""

import io
from datetime import timedelta
from decimal import Decimal

from django.contrib.auth.models import Group
from django.core.files.base import ContentFile
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone
from PIL import Image, ImageDraw, ImageFont

from goods.models import Goods
from sales.models import Sale
from sales.services import sale_create
from users.models import MERCHANTS_GROUP, User

SUPERUSER = ("13800000000", "admin12345")
MERCHANT = ("13900000000", "merchant123")
OTHER_MERCHANT = ("13900000001", "merchant123")
SHOPPER_PASSWORD = "shopper123"
SHOPPERS = [f"137{n:08d}" for n in range(1, 21)]

# (name, title) in English and in Chinese, price, seckill price, stock, starts (minutes from
# now), lasts (minutes), colour
ITEMS = [
    (("iPhone X", "Apple iPhone X 64GB silver"), ("iPhone X", "苹果 iPhone X 64GB 银色"),
     "8765.00", "1.00", 10, -5, 240, (52, 120, 246)),
    (("Mate Pad", "Tablet 11-inch 128GB"), ("Mate Pad 平板电脑", "11 英寸平板电脑 128GB"),
     "2999.00", "99.00", 5, 3, 240, (18, 128, 92)),
    (("Air Buds", "Wireless earbuds, noise cancelling"), ("Air Buds 无线耳机", "主动降噪真无线耳机"),
     "899.00", "9.90", 20, -180, 60, (147, 55, 13)),
    (("Smart Watch", "Sport watch with GPS"), ("智能手表", "GPS 运动手表"),
     "1299.00", "19.90", 0, -10, 240, (110, 57, 214)),
    (("Coffee Beans", "Single origin, 1 kg"), ("精品咖啡豆", "单一产地，1 千克装"),
     "168.00", "0.99", 50, -1, 600, (120, 72, 40)),
]  # fmt: skip


def product_image(name: str, colour: tuple[int, int, int]) -> ContentFile:
    image = Image.new("RGB", (640, 480), colour)
    draw = ImageDraw.Draw(image)
    draw.ellipse((170, 90, 470, 390), fill=tuple(min(255, c + 60) for c in colour))
    font = ImageFont.load_default(size=44)
    box = draw.textbbox((0, 0), name, font=font)
    draw.text(((640 - box[2]) / 2, 400), name, font=font, fill=(255, 255, 255))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return ContentFile(buffer.getvalue(), name=f"{name.lower().replace(' ', '-')}.png")


class Command(BaseCommand):
    help = "Create the demo merchant, shoppers and sales (once); print the demo logins."

    def handle(self, *args, **options) -> None:
        if User.objects.filter(mobile=MERCHANT[0]).exists():
            self.stdout.write("Demo data already present.")
        else:
            self._create()
            self.stdout.write(self.style.SUCCESS("Demo data created."))
        self.stdout.write(
            "Demo logins (mobile / password):\n"
            f"  superuser   {SUPERUSER[0]} / {SUPERUSER[1]}\n"
            f"  merchant    {MERCHANT[0]} / {MERCHANT[1]}   (another: {OTHER_MERCHANT[0]})\n"
            f"  shoppers    {SHOPPERS[0]} … {SHOPPERS[-1]} / {SHOPPER_PASSWORD}"
        )

    @transaction.atomic
    def _create(self) -> None:
        now = timezone.now()
        User.objects.create_superuser(SUPERUSER[0], SUPERUSER[1], nickname="Admin")
        merchants, _ = Group.objects.get_or_create(name=MERCHANTS_GROUP)
        merchant = User.objects.create_user(MERCHANT[0], MERCHANT[1], nickname="Demo Shop", is_staff=True)
        other = User.objects.create_user(OTHER_MERCHANT[0], OTHER_MERCHANT[1], nickname="Other Shop", is_staff=True)
        merchants.user_set.add(merchant, other)
        for index, mobile in enumerate(SHOPPERS, start=1):
            User.objects.create_user(mobile, SHOPPER_PASSWORD, nickname=f"Shopper {index}")
        for (name, title), (name_zh, title_zh), price, sale_price, stock, starts, lasts, colour in ITEMS:
            goods = Goods.objects.create(
                owner=merchant,
                name_en=name,
                name_zh_hans=name_zh,
                title_en=title,
                title_zh_hans=title_zh,
                detail_en=f"{title}. Demo item of the Seckill shop.",
                detail_zh_hans=f"{title_zh}。秒杀商城的演示商品。",
                price=Decimal(price),
                stock=100,
                image=product_image(name, colour),
            )
            start = now + timedelta(minutes=starts)
            sale = Sale(
                goods=goods,
                seckill_price=Decimal(sale_price),
                stock_count=stock,
                start_at=start,
                end_at=start + timedelta(minutes=lasts),
            )
            sale_create(sale=sale, actor=merchant)  # its stock audit starts with the merchant's units
