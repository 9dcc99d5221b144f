"""The Alipay gateway stand-in (tools/alipay_gateway), run as the shop runs it: a real process on
a free port, spoken to only through python-alipay-sdk, as the shop does, and plain HTTP, as a
browser and a notify receiver do. Its notify schedule is compressed to a few seconds."""

import csv
import http.client
import io
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zipfile
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import alipay
import pytest
from Cryptodome.PublicKey import RSA

from tools.alipay_gateway import keys, times
from tools.alipay_gateway.notify import ATTEMPT_OFFSETS_S
from tools.net import free_port, wait_until

# The stand-in runs as a real process: make test-fast leaves it out.
pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[2]
APP_ID = "2021000000000001"
SELLER_ID = "2088000000000001"
# Alipay's 25 h of retries in about 4.4 s.
RETRY_SCALE = 0.00005
BEIJING = timezone(timedelta(hours=8))
# How long a notify may take to arrive on a loaded machine; a bound, not a wait.
ARRIVAL_BOUND_S = 10


class Gateway:
    """A gateway process; `url` is where it listens."""

    def __init__(self, state: Path) -> None:
        self.state = state
        port = free_port()
        command = [sys.executable, "-m", "tools.alipay_gateway", "--host", "127.0.0.1", "--port", str(port)]
        command += ["--state", str(state), "--retry-scale", str(RETRY_SCALE)]
        self.log = open(state.parent / f"{state.name}.log", "a")
        self.process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline()
        assert line == f"alipay gateway on http://127.0.0.1:{port}\n", line
        self.url = f"http://127.0.0.1:{port}"

    def stop(self) -> int:
        self.process.terminate()
        code = self.process.wait(timeout=15)
        self.log.close()
        return code

    def sdk(self, app_id: str = APP_ID, private_key: str | None = None) -> alipay.AliPay:
        """A client as the shop makes it, with the keys the gateway made."""
        client = alipay.AliPay(
            appid=app_id,
            app_notify_url=None,
            app_private_key_string=private_key or (self.state / "app_private.pem").read_text(),
            alipay_public_key_string=(self.state / "alipay_public.pem").read_text(),
            sign_type="RSA2",
        )
        client._gateway = f"{self.url}/gateway.do"
        return client

    def control(self, verb: str, path: str) -> tuple[int, dict]:
        status, _, body = request(verb, f"{self.url}/_control/{path}")
        return status, json.loads(body)

    def notifications(self, out_trade_no: str) -> list[dict]:
        _, answer = self.control("GET", "trades")
        trade = next(trade for trade in answer["trades"] if trade["out_trade_no"] == out_trade_no)
        return trade["notifications"]


class Receiver:
    """The merchant's notify_url: records each POST, answers with `answers` in turn (then
    `success`), each after `delay` seconds."""

    def __init__(self, answers: list[str] | None = None, delay: float = 0) -> None:
        self.answers = list(answers or [])
        self.delay = delay
        self.received: list[tuple[float, dict[str, str], str]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8")
                receiver.received.append(
                    (time.monotonic(), dict(urllib.parse.parse_qsl(body)), self.headers["Content-Type"])
                )
                time.sleep(receiver.delay)
                answer = (receiver.answers.pop(0) if receiver.answers else "success").encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/alipay/notify"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def wait_for(self, count: int, timeout: float = ARRIVAL_BOUND_S) -> list[dict[str, str]]:
        assert wait_until(lambda: len(self.received) >= count, timeout), f"{len(self.received)} of {count} arrived"
        return [params for _, params, _ in self.received]


def request(verb: str, url: str, form: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """One HTTP request as a browser makes it, redirects not followed: status, headers, body."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=15)
    body = urllib.parse.urlencode(form).encode() if form is not None else None
    headers = {"Content-Type": "application/x-www-form-urlencoded"} if form is not None else {}
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    connection.request(verb, path, body=body, headers=headers)
    response = connection.getresponse()
    answer = response.status, dict(response.getheaders()), response.read().decode("utf-8", errors="replace")
    connection.close()
    return answer


def verified(sdk: alipay.AliPay, params: dict[str, str]) -> bool:
    """Whether `params` carry Alipay's signature, checked as the shop checks a notify or a return:
    `sign` popped, the rest (sign_type included, which the SDK drops itself) to `AliPay.verify`."""
    rest = dict(params)
    return sdk.verify(rest, rest.pop("sign"))


def order_number() -> str:
    return f"T{uuid.uuid4().hex[:20]}"


def beijing(seconds_from_now: float) -> str:
    return (datetime.now(BEIJING) + timedelta(seconds=seconds_from_now)).strftime("%Y-%m-%d %H:%M:%S")


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    running = Gateway(tmp_path_factory.mktemp("alipay") / "state")
    yield running
    assert running.stop() == 0, "SIGTERM stops it cleanly"


@pytest.fixture
def sdk(gateway):
    return gateway.sdk()


@pytest.fixture
def receiver():
    made: list[Receiver] = []

    def make(answers: list[str] | None = None, delay: float = 0) -> Receiver:
        made.append(Receiver(answers, delay))
        return made[-1]

    yield make
    for one in made:
        one.server.shutdown()
        one.server.server_close()


def page_pay(gateway, sdk, out_trade_no, amount="19.99", notify_url=None, **extra) -> str:
    """The URL the shop sends the shopper's browser to."""
    query = sdk.api_alipay_trade_page_pay(
        subject="秒杀 Flash sale",
        out_trade_no=out_trade_no,
        total_amount=amount,
        return_url="http://shop.test/orders/alipay/return?from=alipay",
        notify_url=notify_url,
        **extra,
    )
    return f"{gateway.url}/gateway.do?{query}"


def opened(gateway, sdk, out_trade_no, amount="19.99", notify_url=None, **extra) -> str:
    status, _, page = request("GET", page_pay(gateway, sdk, out_trade_no, amount, notify_url, **extra))
    assert status == 200 and 'id="pay"' in page, page
    return page


def paid(gateway, sdk, out_trade_no, amount="19.99", notify_url=None) -> dict:
    opened(gateway, sdk, out_trade_no, amount, notify_url)
    status, answer = gateway.control("POST", f"pay/{out_trade_no}")
    assert status == 200, answer
    return answer


def test_keys_made_by_two_processes_at_once_are_one_pair_each(tmp_path: Path) -> None:
    script = "import sys, pathlib; from tools.alipay_gateway import keys; keys.ensure(pathlib.Path(sys.argv[1]))"
    racers = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], cwd=ROOT) for _ in range(2)]
    assert [racer.wait(timeout=60) for racer in racers] == [0, 0]
    made = keys.ensure(tmp_path)
    for owner in ("alipay", "app"):
        private = RSA.importKey((tmp_path / f"{owner}_private.pem").read_text())
        public = RSA.importKey((tmp_path / f"{owner}_public.pem").read_text())
        assert private.public_key() == public
        assert (tmp_path / f"{owner}_public.pem").read_text().startswith("-----BEGIN PUBLIC KEY-----")
    assert made.app_public == RSA.importKey((tmp_path / "app_public.pem").read_text())
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "alipay_private.pem",
        "alipay_public.pem",
        "app_private.pem",
        "app_public.pem",
    ]


def test_a_page_payment_returns_signed_to_the_shop_and_notifies_it(gateway, sdk, receiver) -> None:
    shop, out_trade_no = receiver(), order_number()
    page = opened(gateway, sdk, out_trade_no, "19.99", shop.url)
    assert "¥ 19.99" in page and out_trade_no in page and "秒杀 Flash sale" in page and 'id="cancel"' in page
    assert sdk.api_alipay_trade_query(out_trade_no=out_trade_no)["trade_status"] == "WAIT_BUYER_PAY"

    status, headers, _ = request("POST", f"{gateway.url}/cashier/{out_trade_no}/pay")
    assert status == 302
    location = headers["Location"]
    assert location.startswith("http://shop.test/orders/alipay/return?from=alipay&")
    returned = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
    assert returned.pop("from") == "alipay"
    assert verified(sdk, returned)
    assert returned["method"] == "alipay.trade.page.pay.return"
    assert (returned["out_trade_no"], returned["total_amount"]) == (out_trade_no, "19.99")
    assert (returned["app_id"], returned["seller_id"]) == (APP_ID, SELLER_ID)
    assert len(returned["trade_no"]) == 28 and returned["trade_no"].isdigit()

    [notify] = shop.wait_for(1)
    assert shop.received[0][2] == "application/x-www-form-urlencoded; charset=utf-8"
    assert verified(sdk, notify)
    assert notify["notify_type"] == "trade_status_sync" and notify["trade_status"] == "TRADE_SUCCESS"
    assert (notify["trade_no"], notify["out_trade_no"]) == (returned["trade_no"], out_trade_no)
    assert notify["total_amount"] == notify["receipt_amount"] == notify["buyer_pay_amount"] == "19.99"
    assert notify["subject"] == "秒杀 Flash sale" and notify["seller_id"] == SELLER_ID
    for name in ("notify_time", "notify_id", "app_id", "buyer_id", "gmt_create", "gmt_payment", "charset", "version"):
        assert notify[name], name

    found = sdk.api_alipay_trade_query(out_trade_no=out_trade_no)
    assert found["code"] == "10000" and found["trade_status"] == "TRADE_SUCCESS"
    assert found["trade_no"] == returned["trade_no"] and found["buyer_pay_amount"] == "19.99"
    assert found["send_pay_date"] == notify["gmt_payment"]
    assert sdk.api_alipay_trade_query(trade_no=found["trade_no"])["out_trade_no"] == out_trade_no


def test_a_wap_payment_returns_with_the_wap_method(gateway, sdk) -> None:
    out_trade_no = order_number()
    query = sdk.api_alipay_trade_wap_pay(
        subject="Phone", out_trade_no=out_trade_no, total_amount="1.00", return_url="http://shop.test/back"
    )
    assert request("GET", f"{gateway.url}/gateway.do?{query}")[0] == 200
    status, headers, _ = request("POST", f"{gateway.url}/cashier/{out_trade_no}/pay")
    returned = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(headers["Location"]).query))
    assert status == 302 and returned["method"] == "alipay.trade.wap.pay.return"
    assert verified(sdk, returned)


def test_a_notify_is_retried_on_the_schedule_until_the_shop_says_success(gateway, sdk, receiver) -> None:
    shop, out_trade_no = receiver(answers=["fail", "  oops  "]), order_number()
    paid(gateway, sdk, out_trade_no, notify_url=shop.url)
    notifies = shop.wait_for(3)
    assert len({notify["notify_id"] for notify in notifies}) == 1, "one event, one notify_id"
    for notify in notifies:
        assert verified(sdk, notify)
    time.sleep(ATTEMPT_OFFSETS_S[4] * RETRY_SCALE + 0.3)
    assert len(shop.received) == 3, "no attempt after success"
    [notification] = gateway.notifications(out_trade_no)
    assert notification["count"] == 3 and notification["delivered"] and notification["last_answer"] == "success"


def test_a_notify_nobody_accepts_is_sent_eight_times_then_given_up(gateway, sdk, receiver) -> None:
    shop, out_trade_no = receiver(answers=["fail"] * 20), order_number()
    paid(gateway, sdk, out_trade_no, notify_url=shop.url)
    shop.wait_for(8)
    arrivals = [arrival for arrival, _, _ in shop.received]
    # The schedule counts from the first attempt's start; the latest attempts are far enough apart
    # for the network's few milliseconds not to matter.
    for attempt in (5, 6, 7):
        expected = ATTEMPT_OFFSETS_S[attempt] * RETRY_SCALE
        assert expected - 0.05 <= arrivals[attempt] - arrivals[0] <= expected + 2, attempt
    time.sleep(1)
    assert len(shop.received) == 8
    [notification] = gateway.notifications(out_trade_no)
    assert notification["count"] == 8 and not notification["delivered"] and notification["last_answer"] == "fail"


def test_a_slow_shop_holds_up_no_other_notify(gateway, sdk, receiver) -> None:
    slow, fast = receiver(delay=3), receiver()
    paid(gateway, sdk, order_number(), notify_url=slow.url)
    slow.wait_for(1)
    started = time.monotonic()
    paid(gateway, sdk, order_number(), notify_url=fast.url)
    fast.wait_for(1)
    assert time.monotonic() - started < 2


def test_held_notifies_go_out_when_released_and_one_can_be_sent_again(gateway, sdk, receiver) -> None:
    shop, out_trade_no = receiver(), order_number()
    assert gateway.control("POST", "notifications?hold=1") == (200, {"hold": True})
    try:
        paid(gateway, sdk, out_trade_no, notify_url=shop.url)
        time.sleep(0.5)
        assert shop.received == [] and gateway.notifications(out_trade_no)[0]["count"] == 0
    finally:
        assert gateway.control("POST", "notifications?hold=0") == (200, {"hold": False})
    [first] = shop.wait_for(1)

    status, answer = gateway.control("POST", f"notify/{out_trade_no}")
    assert status == 200 and answer["delivery"]["delivered"] and answer["notify_id"] == first["notify_id"]
    assert shop.wait_for(2)[1]["notify_id"] == first["notify_id"]
    assert gateway.control("POST", "notify/T_unknown")[0] == 404


def test_the_same_order_again_shows_the_same_trade_and_another_amount_is_refused(gateway, sdk) -> None:
    out_trade_no = order_number()
    first = opened(gateway, sdk, out_trade_no, "8.00")
    assert opened(gateway, sdk, out_trade_no, "8.00") == first, "the same trade, the same trade_no"
    status, _, page = request("GET", page_pay(gateway, sdk, out_trade_no, "9.00"))
    assert status == 200 and "ACQ.CONTEXT_INCONSISTENT" in page and 'id="pay"' not in page
    assert sdk.api_alipay_trade_query(out_trade_no=out_trade_no)["total_amount"] == "8.00"


def test_cancel_leaves_the_trade_unpaid_with_an_unsigned_link_back(gateway, sdk) -> None:
    out_trade_no = order_number()
    opened(gateway, sdk, out_trade_no)
    status, _, page = request("POST", f"{gateway.url}/cashier/{out_trade_no}/cancel")
    assert status == 200 and "已取消" in page and "You left the cashier" in page
    assert 'href="http://shop.test/orders/alipay/return?from=alipay"' in page
    assert sdk.api_alipay_trade_query(out_trade_no=out_trade_no)["trade_status"] == "WAIT_BUYER_PAY"


def test_close_ends_an_unpaid_trade_only(gateway, sdk) -> None:
    out_trade_no = order_number()
    assert sdk.api_alipay_trade_close(out_trade_no=out_trade_no)["sub_code"] == "ACQ.TRADE_NOT_EXIST"
    opened(gateway, sdk, out_trade_no)
    closed = sdk.api_alipay_trade_close(out_trade_no=out_trade_no)
    assert closed["code"] == "10000" and closed["out_trade_no"] == out_trade_no and len(closed["trade_no"]) == 28
    assert sdk.api_alipay_trade_query(out_trade_no=out_trade_no)["trade_status"] == "TRADE_CLOSED"
    again = sdk.api_alipay_trade_close(out_trade_no=out_trade_no)
    assert (again["code"], again["msg"], again["sub_code"]) == ("40004", "Business Failed", "ACQ.TRADE_STATUS_ERROR")
    assert gateway.control("POST", f"pay/{out_trade_no}")[0] == 409
    status, _, page = request("POST", f"{gateway.url}/cashier/{out_trade_no}/pay")
    assert status == 200 and "ACQ.TRADE_HAS_CLOSE" in page

    out_trade_no = order_number()
    paid(gateway, sdk, out_trade_no)
    assert sdk.api_alipay_trade_close(out_trade_no=out_trade_no)["sub_code"] == "ACQ.TRADE_STATUS_ERROR"
    assert gateway.control("POST", f"pay/{out_trade_no}")[0] == 409
    assert gateway.control("POST", "pay/T_unknown")[0] == 404


def test_refunds_are_idempotent_per_request_number_and_closing_when_whole(gateway, sdk, receiver) -> None:
    shop, out_trade_no = receiver(), order_number()
    trade_no = paid(gateway, sdk, out_trade_no, "19.99", shop.url)["trade_no"]
    shop.wait_for(1)

    def refund(amount: str, out_request_no: str) -> dict:
        return sdk.api_alipay_trade_refund(
            amount, out_trade_no=out_trade_no, out_request_no=out_request_no, refund_reason="售后 after-sales"
        )

    first = refund("5.00", "R1")
    assert (first["code"], first["fund_change"], first["refund_fee"]) == ("10000", "Y", "5.00")
    assert first["trade_no"] == trade_no and first["gmt_refund_pay"] and first["buyer_user_id"]
    again = refund("5.00", "R1")
    assert (again["fund_change"], again["refund_fee"]) == ("N", "5.00")
    assert again["gmt_refund_pay"] == first["gmt_refund_pay"]
    assert refund("6.00", "R1")["sub_code"] == "ACQ.REFUND_AMT_NOT_EQUAL_TOTAL"
    assert refund("15.00", "R2")["sub_code"] == "ACQ.REFUND_FEE_ERROR"
    assert sdk.api_alipay_trade_query(out_trade_no=out_trade_no)["trade_status"] == "TRADE_SUCCESS"

    found = sdk.api_alipay_trade_fastpay_refund_query("R1", out_trade_no=out_trade_no)
    assert (found["code"], found["refund_status"], found["refund_amount"]) == ("10000", "REFUND_SUCCESS", "5.00")
    assert (found["total_amount"], found["out_request_no"]) == ("19.99", "R1")
    unknown = sdk.api_alipay_trade_fastpay_refund_query("R9", out_trade_no=out_trade_no)
    assert unknown["code"] == "10000" and "refund_status" not in unknown

    rest = sdk.api_alipay_trade_refund("14.99", trade_no=trade_no, out_request_no="R2")
    assert (rest["fund_change"], rest["refund_fee"]) == ("Y", "19.99")
    assert sdk.api_alipay_trade_query(out_trade_no=out_trade_no)["trade_status"] == "TRADE_CLOSED"
    assert refund("14.99", "R2")["fund_change"] == "N", "a retry after the close still answers"
    assert refund("0.01", "R3")["sub_code"] == "ACQ.TRADE_STATUS_ERROR"

    notifies = shop.wait_for(3)
    for notify in notifies:
        assert verified(sdk, notify)
    partial, whole = sorted(notifies[1:], key=lambda notify: float(notify["refund_fee"]))
    assert (partial["trade_status"], partial["refund_fee"], partial["out_biz_no"]) == ("TRADE_SUCCESS", "5.00", "R1")
    assert (whole["trade_status"], whole["refund_fee"], whole["out_biz_no"]) == ("TRADE_CLOSED", "19.99", "R2")
    assert partial["gmt_refund"] and len({notify["notify_id"] for notify in notifies}) == 3

    unpaid = order_number()
    opened(gateway, sdk, unpaid)
    assert sdk.api_alipay_trade_refund("1.00", out_trade_no=unpaid)["sub_code"] == "ACQ.TRADE_STATUS_ERROR"
    assert sdk.api_alipay_trade_refund("1.00", out_trade_no=order_number())["sub_code"] == "ACQ.TRADE_NOT_EXIST"


def test_the_day_bill_lists_payments_and_refunds_in_gbk(gateway, sdk) -> None:
    out_trade_no = order_number()
    trade_no = paid(gateway, sdk, out_trade_no, "12.34")["trade_no"]
    sdk.api_alipay_trade_refund("2.00", out_trade_no=out_trade_no, out_request_no="B1")

    today = datetime.now(BEIJING).strftime("%Y-%m-%d")
    query = "alipay.data.dataservice.bill.downloadurl.query"
    answer = sdk.server_api(query, biz_content={"bill_type": "trade", "bill_date": today})
    assert answer["code"] == "10000" and answer["bill_download_url"].startswith(f"{gateway.url}/bill/")
    status, headers, _ = request("GET", answer["bill_download_url"])
    assert status == 200 and headers["Content-Type"] == "application/zip"
    with urllib.request.urlopen(answer["bill_download_url"]) as response:
        bundle = zipfile.ZipFile(io.BytesIO(response.read()))
    [name] = bundle.namelist()
    assert name == f"{SELLER_ID}0156_{today.replace('-', '')}_业务明细.csv"
    lines = bundle.read(name).decode("gbk").splitlines()
    assert lines[0] == "#支付宝业务明细查询" and lines[-1].startswith("#导出时间：")
    table = [line for line in lines if not line.startswith("#")]
    rows = [[field.strip() for field in row] for row in csv.reader(table)]
    header, rows = rows[0], [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]
    assert header[:3] == ["支付宝交易号", "商户订单号", "业务类型"] and header[-1] == "备注" and len(header) == 25
    mine = [row for row in rows if row["商户订单号"] == out_trade_no]
    payment, refund = sorted(mine, key=lambda row: row["业务类型"] != "交易")
    assert (payment["支付宝交易号"], payment["业务类型"], payment["订单金额（元）"]) == (trade_no, "交易", "12.34")
    assert payment["商家实收（元）"] == "12.34" and payment["退款批次号/请求号"] == ""
    assert (refund["业务类型"], refund["商家实收（元）"], refund["退款批次号/请求号"]) == ("退款", "-2.00", "B1")

    tomorrow = (datetime.now(BEIJING) + timedelta(days=1)).strftime("%Y-%m-%d")
    later = sdk.server_api(query, biz_content={"bill_type": "trade", "bill_date": tomorrow})
    assert later["sub_code"] == "isp.bill_not_exist"
    assert request("GET", f"{gateway.url}/bill/{'0' * 32}.csv.zip")[0] == 404


def test_time_expire_bounds_creating_and_paying(gateway, sdk) -> None:
    late = order_number()
    status, _, page = request("GET", page_pay(gateway, sdk, late, time_expire=beijing(-60)))
    assert status == 200 and "ACQ.TRADE_HAS_CLOSE" in page and 'id="pay"' not in page
    assert sdk.api_alipay_trade_query(out_trade_no=late)["sub_code"] == "ACQ.TRADE_NOT_EXIST", "never created"

    soon = order_number()
    page = opened(gateway, sdk, soon, time_expire=beijing(2))
    assert "付款截止" in page
    assert wait_until(lambda: sdk.api_alipay_trade_query(out_trade_no=soon)["trade_status"] == "TRADE_CLOSED", 5)
    assert gateway.control("POST", f"pay/{soon}")[0] == 409
    assert "ACQ.TRADE_HAS_CLOSE" in request("POST", f"{gateway.url}/cashier/{soon}/pay")[2]


def test_timeout_express_counts_from_creation() -> None:
    start = times.parse("2026-11-28 23:50:00")
    assert times.text(times.timeout_end("15m", start)) == "2026-11-29 00:05:00"
    assert times.text(times.timeout_end("1c", start)) == "2026-11-29 00:00:00"
    for wrong in ("0m", "16d", "15", "1.5h"):
        with pytest.raises(ValueError):
            times.timeout_end(wrong, start)


def test_forged_and_tampered_requests_are_refused(gateway, sdk) -> None:
    forger = gateway.sdk(private_key=RSA.generate(2048).export_key().decode())
    with pytest.raises(alipay.AliPayException, match="isv.invalid-signature"):
        forger.api_alipay_trade_query(out_trade_no="T1")
    with pytest.raises(alipay.AliPayException, match="isv.invalid-app-id"):
        gateway.sdk(app_id="2021000000000999").api_alipay_trade_query(out_trade_no="T1")
    with pytest.raises(alipay.AliPayException, match="isv.invalid-method"):
        sdk.server_api("alipay.trade.precreate", biz_content={"out_trade_no": "T1"})

    signed = page_pay(gateway, sdk, order_number(), "19.99")
    tampered = signed.replace("19.99", "0.01")
    assert tampered != signed
    status, headers, body = request("GET", tampered)
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    assert json.loads(body)["error_response"]["sub_code"] == "isv.invalid-signature"
    unsigned = "&".join(part for part in signed.split("&") if not part.startswith("sign="))
    assert json.loads(request("GET", unsigned)[2])["error_response"]["sub_code"] == "isv.missing-signature"


def test_parameters_come_from_a_post_form_as_from_the_query_string(gateway, sdk) -> None:
    out_trade_no = order_number()
    opened(gateway, sdk, out_trade_no)
    form = dict(urllib.parse.parse_qsl(sdk.client_api("alipay.trade.query", {"out_trade_no": out_trade_no})))
    status, _, body = request("POST", f"{gateway.url}/gateway.do", form)
    assert status == 200
    answer = sdk._verify_and_return_sync_response(body, "alipay_trade_query_response")
    assert answer["trade_status"] == "WAIT_BUYER_PAY"


def test_an_empty_parameter_the_sdk_signs_fails_the_signature_as_at_alipay(gateway, sdk) -> None:
    with pytest.raises(alipay.AliPayException, match="isv.invalid-signature"):
        sdk.server_api("alipay.trade.query", biz_content={"out_trade_no": "T1"}, app_auth_token="")


def test_an_outage_answers_503_until_it_ends(gateway, sdk) -> None:
    out_trade_no = order_number()
    cashier_url = page_pay(gateway, sdk, out_trade_no)
    assert gateway.control("POST", "outage?seconds=30")[0] == 200
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            sdk.api_alipay_trade_query(out_trade_no=out_trade_no)
        assert refused.value.code == 503
        assert request("GET", cashier_url)[0] == 503
        assert request("POST", f"{gateway.url}/cashier/{out_trade_no}/pay")[0] == 503
        assert gateway.control("GET", "trades")[1]["outage_left"] > 0
    finally:
        gateway.control("POST", "outage?seconds=0")
    assert sdk.api_alipay_trade_query(out_trade_no=out_trade_no)["sub_code"] == "ACQ.TRADE_NOT_EXIST"


def test_a_restart_keeps_the_trades_and_data_can_be_forgotten(tmp_path: Path) -> None:
    first = Gateway(tmp_path / "state")
    try:
        out_trade_no = order_number()
        sdk = first.sdk()
        query = sdk.api_alipay_trade_page_pay(subject="Kept", out_trade_no=out_trade_no, total_amount="3.00")
        status, _, body = request("POST", f"{first.url}/_control/create", dict(urllib.parse.parse_qsl(query)))
        assert status == 200 and json.loads(body)["trade_status"] == "WAIT_BUYER_PAY"
        assert first.control("POST", f"pay/{out_trade_no}")[0] == 200
    finally:
        assert first.stop() == 0
    second = Gateway(tmp_path / "state")
    try:
        assert second.sdk().api_alipay_trade_query(out_trade_no=out_trade_no)["trade_status"] == "TRADE_SUCCESS"
        assert second.control("DELETE", "data") == (200, {"trades": 0})
        assert second.sdk().api_alipay_trade_query(out_trade_no=out_trade_no)["sub_code"] == "ACQ.TRADE_NOT_EXIST"
    finally:
        assert second.stop() == 0
