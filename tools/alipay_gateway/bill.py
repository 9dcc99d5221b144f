"""The trade bill ("业务明细") of one day, as `alipay.data.dataservice.bill.downloadurl.query`
hands it out: a short-lived link to a zip holding one CSV in GBK.

The CSV, lines ending CRLF:

    #支付宝业务明细查询
    #账号：[<seller_id>0156]
    #起始日期：[2026年11月28日 00:00:00]   终止日期：[2026年11月29日 00:00:00]
    #-----------------------------------------业务明细列表----------------------------------------
    支付宝交易号,商户订单号,业务类型,... (COLUMNS)
    one row per payment (业务类型 交易) and per refund (退款) completed that day, Beijing time
    #-----------------------------------------业务明细列表结束------------------------------------
    #交易合计：2笔，商家实收共39.98元，商家优惠共0.00元
    #退款合计：1笔，商家实收退款共-5.00元，商家优惠退款共0.00元
    #导出时间：[2026年11月29日 09:00:00]

As in Alipay's, the long numbers (交易号, 订单号, 退款请求号) end in a tab so that spreadsheets keep
them as text: strip every field. A refund's row has the trade's 订单金额 and the refund, negative,
as 商家实收, with its out_request_no as 退款批次号/请求号.
"""

from __future__ import annotations

import csv
import io
import secrets
import threading
import time
import zipfile
from datetime import date, datetime, timedelta

from tools.alipay_gateway import times
from tools.alipay_gateway.trades import BUYER_LOGON_ID, Trade, amount, yuan

COLUMNS = (
    "支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,对方账户,"
    "订单金额（元）,商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,商家优惠（元）,券核销金额（元）,"
    "券名称,商家红包消费金额（元）,卡消费金额（元）,退款批次号/请求号,服务费（元）,分润（元）,备注"
).split(",")
# Alipay's download links work for 30 seconds.
LINK_LIFETIME_S = 30
ZERO = "0.00"


class Links:
    """The bill links handed out: a random token per link, good for LINK_LIFETIME_S."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._links: dict[str, tuple[date, float]] = {}

    def issue(self, day: date) -> str:
        token = secrets.token_hex(16)
        with self._lock:
            now = time.monotonic()
            self._links = {key: link for key, link in self._links.items() if link[1] > now}
            self._links[token] = (day, now + LINK_LIFETIME_S)
        return token

    def day(self, token: str) -> date | None:
        """The day the link is for; None if there is no such link or it has lapsed."""
        with self._lock:
            link = self._links.get(token)
        return link[0] if link is not None and link[1] > time.monotonic() else None


def archive(trades: list[Trade], day: date, seller_id: str, exported: datetime) -> bytes:
    """The zip Alipay serves for `day`'s trade bill of `trades`."""
    text = csv_text(trades, day, seller_id, exported)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr(f"{seller_id}0156_{day:%Y%m%d}_业务明细.csv", text.encode("gbk", errors="replace"))
    return buffer.getvalue()


def csv_text(trades: list[Trade], day: date, seller_id: str, exported: datetime) -> str:
    payments, refunds = _rows(trades, day)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    rule = "-" * 41
    for line in (
        "#支付宝业务明细查询",
        f"#账号：[{seller_id}0156]",
        f"#起始日期：[{_chinese(day)} 00:00:00]   终止日期：[{_chinese(day + timedelta(days=1))} 00:00:00]",
        f"#{rule}业务明细列表{rule}",
    ):
        out.write(line + "\r\n")
    writer.writerow(COLUMNS)
    for row in sorted(payments + refunds, key=lambda row: row[5]):
        writer.writerow(row)
    received = sum((amount(row[12]) for row in payments), amount(ZERO))
    returned = sum((amount(row[12]) for row in refunds), amount(ZERO))
    exported_text = f"{_chinese(exported.date())} {exported:%H:%M:%S}"
    for line in (
        f"#{rule}业务明细列表结束{'-' * 36}",
        f"#交易合计：{len(payments)}笔，商家实收共{yuan(received)}元，商家优惠共0.00元",
        f"#退款合计：{len(refunds)}笔，商家实收退款共{yuan(returned)}元，商家优惠退款共0.00元",
        f"#导出时间：[{exported_text}]",
    ):
        out.write(line + "\r\n")
    return out.getvalue()


def _rows(trades: list[Trade], day: date) -> tuple[list[list[str]], list[list[str]]]:
    payments, refunds = [], []
    for trade in trades:
        if trade.gmt_payment and times.day(trade.gmt_payment) == day:
            payments.append(_row(trade, "交易", trade.gmt_payment, trade.total_amount, ""))
        for refund in trade.refunds:
            if times.day(refund.gmt_refund) == day:
                returned = yuan(-amount(refund.refund_amount))
                refunds.append(_row(trade, "退款", refund.gmt_refund, returned, refund.out_request_no + "\t"))
    return payments, refunds


def _row(trade: Trade, kind: str, completed: str, received: str, request_no: str) -> list[str]:
    return [
        trade.trade_no + "\t",
        trade.out_trade_no + "\t",
        kind,
        trade.subject,
        trade.gmt_create,
        completed,
        "",  # 门店编号
        "",  # 门店名称
        "",  # 操作员
        "",  # 终端号
        BUYER_LOGON_ID,
        trade.total_amount,
        received,
        ZERO,  # 支付宝红包
        ZERO,  # 集分宝
        ZERO,  # 支付宝优惠
        ZERO,  # 商家优惠
        ZERO,  # 券核销金额
        "",  # 券名称
        ZERO,  # 商家红包消费金额
        ZERO,  # 卡消费金额
        request_no,
        ZERO,  # 服务费: the stand-in charges none
        ZERO,  # 分润
        "",  # 备注
    ]


def _chinese(day: date) -> str:
    return f"{day.year}年{day.month:02d}月{day.day:02d}日"
