"""`make record-opening`: real browsers through a sale's opening, every request they make recorded.

    python -m lab.record_opening [--shoppers 20] [--lead 75] [--after 30] [--edge] ...

A production-like deployment as the bench has it (tools.deploy: granian with lab.bench.settings,
a Celery worker, Celery beat; optionally Varnish in front, as `make bench ARGS=--edge`), two
sales opening at the same instant `--lead` seconds ahead (first come, first served with fewer
units than buyers, and a draw taking entries ahead), and `--shoppers` logged-in shoppers, each
a context of its own in one headless Chromium (tools.browser). Shoppers arrive during the
first third of the wait and do what people do:

- first come: buyers press "Buy now" within a second or two of the opening, read the captcha
  (the lab tells the shop the answer it types, lab.shopper.captcha_read) and submit the page's
  own form, so the page's scripts make the path, buy and result requests; a winner follows
  "Pay now" to the order page; some reload the item page at the opening, some only watch;
- draw: entrants enter during the wait the same way and wait on the page for the draw;
  a winner goes to the order page too.

Every request the pages make is kept (tools.opening_mix.Hit): its kind (the route name Django
resolves), seconds from the opening, whether it carried the session or the result ticket
cookie, its status and X-Cache. The rates per phase go to lab/data/opening_mix.json
(`--output`), the raw requests to .run/ (`--raw`). The recording ends `--after` seconds after
the first-come sale sold out. What the rates mean and how the bench replays them:
docs/performance.md ("The opening mix, recorded").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

# Every role's share of a sale's shoppers, and how long a person takes for each step (s).
FIRST_COME_ROLES = {"buyer": 0.55, "reloader": 0.2, "watcher": 0.25}
DRAW_ROLES = {"entrant": 0.8, "watcher": 0.2}
REACTION_S = (0.2, 1.5)  # from the button lighting up to the press
TYPING_S = (2.0, 5.0)  # reading the captcha and typing its answer
TO_PAY_S = (1.0, 3.0)  # from "order placed" to following "Pay now"
# How long a blocking browser step may take before the shopper gives up on it.
STEP_MS = 8000
# The longest the recording waits for the first-come sale to sell out after the opening.
SELL_OUT_WAIT_S = 90.0


def log(message: str) -> None:
    print(f"[record-opening {time.strftime('%H:%M:%S')}] {message}", flush=True)


class Shopper:
    """One person: a browser context with their session cookie, and the steps of their role as a
    generator that yields the time (s from the opening) of its next step."""

    def __init__(self, *, number: int, user_id: int, session: str, group: str, role: str, sale_id: int,
                 arrive_at: float, context, rng: random.Random) -> None:  # fmt: skip
        self.number, self.user_id, self.session = number, user_id, session
        self.group, self.role, self.sale_id, self.arrive_at = group, role, sale_id, arrive_at
        self.context, self.rng = context, rng
        self.page = None
        self.outcome = "watching"
        self.due: float | None = arrive_at
        self.steps: Iterator[float] | None = None


class Recorder:
    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.rng = random.Random(options.seed)
        self.work = Path(options.raw).parent
        self.work.mkdir(parents=True, exist_ok=True)
        self.base_url = ""
        self.t0 = 0.0  # the opening, epoch seconds
        self.pending: list[tuple[Shopper, object, object, float]] = []  # (shopper, request, response, at)
        self.hits: list = []
        self.excluded: Counter[str] = Counter()
        self.sales: dict[str, int] = {}
        self.deployment = None
        self.edge = None

    # --- the deployment ----------------------------------------------------------------------
    def deploy(self):
        import subprocess

        from django.conf import settings

        from lab.bench.edge import BenchEdge
        from tools.deploy import ROOT, Deployment
        from tools.processes import beat_command

        deployment = self.deployment = Deployment(log_dir=self.work / "logs", celery_concurrency=1)
        (self.work / "logs").mkdir(exist_ok=True)
        queue = settings.CELERY_TASK_DEFAULT_QUEUE  # this process publishes the draw's task there too
        deployment.env.update(CELERY_TASK_DEFAULT_QUEUE=queue, REQUEST_LOG_LEVEL="WARNING")
        self.edge = BenchEdge(self.work / "edge") if self.options.edge else None
        if self.edge is not None:
            deployment.env["EDGE_PURGE_URLS"] = self.edge.start(f"127.0.0.1:{deployment.port}", deployment.env)
        log(f"deploying on {deployment.url}: migrate, collectstatic, a Celery worker, beat, granian"
            + (" behind Varnish" if self.edge else ""))  # fmt: skip
        deployment.migrate()
        subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT,
                       env=deployment.env, check=True)  # fmt: skip
        deployment.start_celery(queue)
        schedule = self.work / "logs" / "celerybeat-schedule"
        schedule.unlink(missing_ok=True)
        deployment.processes.spawn("beat", beat_command(schedule))
        deployment.start_web(workers=2, threads=4)
        self.base_url = self.edge.url if self.edge is not None else deployment.url
        return deployment

    def sales_create(self, *, starts_in: float, first_come_units: int, draw_units: int) -> None:
        """Both sales open at the same instant; the draw's entries open in a couple of seconds."""
        from django.utils import timezone

        from goods.models import Goods
        from lab import prepare
        from sales.models import DRAW_WINDOW_DEFAULT, DRAW_WINDOW_NONE, Admission, Sale
        from sales.services import sale_create
        from users.models import User

        merchant, _ = User.objects.get_or_create(mobile=prepare.MERCHANT_MOBILE,
                                                 defaults={"is_staff": True, "nickname": "bench"})  # fmt: skip
        start = timezone.now() + timedelta(seconds=starts_in)
        for group, units in (("first_come", first_come_units), ("draw", draw_units)):
            goods = Goods.objects.create(owner=merchant, name=f"{prepare.GOODS_PREFIX}recorded {group}",
                                         title=f"Recorded opening ({group})", price=999, stock=units)  # fmt: skip
            draw = group == "draw"
            sale = sale_create(
                sale=Sale(
                    goods=goods,
                    seckill_price=1,
                    stock_count=units,
                    start_at=start,
                    end_at=start + timedelta(hours=1),
                    admission=Admission.DRAW if draw else Admission.FCFS,
                    draw_window_s=DRAW_WINDOW_NONE if draw else DRAW_WINDOW_DEFAULT,
                    entries_open_at=timezone.now() + timedelta(seconds=3) if draw else None,
                ),
                actor=merchant,
            )
            self.sales[group] = sale.pk
        self.t0 = start.timestamp()
        log(f"sales: first come #{self.sales['first_come']} ({first_come_units} units), draw #{self.sales['draw']}"
            f" ({draw_units} units, entries open now), both opening in {starts_in:.0f} s")  # fmt: skip

    # --- recording -----------------------------------------------------------------------------
    def watch(self, shopper: Shopper) -> None:
        """Keep every request of the shopper's pages; their headers are read outside the event."""

        def answered(response) -> None:
            self.pending.append((shopper, response.request, response, time.time()))

        def failed(request) -> None:
            self.pending.append((shopper, request, None, time.time()))

        shopper.context.on("response", answered)
        shopper.context.on("requestfailed", failed)

    def drain(self) -> None:
        """The pending requests as Hits (their cookie headers asked of the browser now)."""
        from django.conf import settings

        from tools.opening_mix import Hit, kind_of, template_of

        pending, self.pending = self.pending, []
        origin = urlsplit(self.base_url).netloc
        ticket_cookie = settings.SECKILL_RESULT_TICKET_COOKIE
        for shopper, request, response, seen_at in pending:
            parts = urlsplit(request.url)
            if parts.scheme not in ("http", "https"):
                continue  # blob: and data: URLs are the page's own memory
            if parts.netloc != origin:
                self.excluded[parts.netloc] += 1
                continue
            try:
                cookie = request.all_headers().get("cookie", "")
            except Exception:  # noqa: BLE001 - a page gone since: its cookies are unknown
                cookie = ""
            started = (request.timing or {}).get("startTime", -1)
            at = (started / 1000 if started and started > 0 else seen_at) - self.t0
            names = {part.split("=", 1)[0].strip() for part in cookie.split(";") if part.strip()}
            self.hits.append(
                Hit(
                    at=round(at, 3),
                    method=request.method,
                    kind=kind_of(parts.path),
                    shopper=shopper.number,
                    group=shopper.group,
                    session=settings.SESSION_COOKIE_NAME in names,
                    ticket=ticket_cookie in names,
                    status=response.status if response is not None else 0,
                    x_cache=(response.headers.get("x-cache", "none") if response is not None else "none"),
                    template=template_of(request.url, self.sales[shopper.group]),
                )
            )

    # --- the people ----------------------------------------------------------------------------
    def now(self) -> float:
        return time.time() - self.t0

    def until(self, shopper: Shopper, expression: str, timeout: float) -> Iterator[float]:
        """Wait (yielding to the others) until `expression` is true on the shopper's page."""
        deadline = self.now() + timeout
        while not shopper.page.evaluate(expression):
            if self.now() > deadline:
                raise TimeoutError(f"never true: {expression}")
            yield self.now() + 0.2

    def press_and_solve(self, shopper: Shopper) -> Iterator[float]:
        """Press the panel's button once it is on, read the captcha, type its answer, submit."""
        from lab.shopper import captcha_read

        page = shopper.page
        yield from self.until(shopper, "(b => b && !b.disabled)(document.getElementById('buy'))", 60)
        yield self.now() + shopper.rng.uniform(*REACTION_S)
        page.click("#buy", timeout=STEP_MS)
        yield from self.until(shopper, "document.getElementById('captcha-img').naturalWidth > 0", 20)
        yield self.now() + shopper.rng.uniform(*TYPING_S)
        answer = captcha_read(sale_id=shopper.sale_id, user_id=shopper.user_id)
        page.fill("#captcha-answer", str(answer), timeout=STEP_MS)
        page.click("#captcha-form button[type=submit]", timeout=STEP_MS)
        shopper.outcome = "submitted"

    def to_pay(self, shopper: Shopper, timeout: float) -> Iterator[float]:
        """Wait for the panel's "Pay now", then follow it to the order page."""
        deadline = self.now() + timeout
        while not shopper.page.query_selector("#pay-now"):
            if self.now() > deadline:
                return
            yield self.now() + 0.3
        shopper.outcome = "ordered"
        yield self.now() + shopper.rng.uniform(*TO_PAY_S)
        shopper.page.click("#pay-now", timeout=STEP_MS)
        shopper.outcome = "order page"

    def steps(self, shopper: Shopper) -> Iterator[float]:
        page = shopper.page = shopper.context.new_page()
        page.goto(f"{self.base_url}/goods/detail/{shopper.sale_id}", timeout=30_000)
        if shopper.role == "entrant":
            # Some time into the wait, and early enough to have typed the answer before entries close.
            yield self.now() + min(shopper.rng.uniform(3, max(4.0, -self.now() * 0.6)), max(0.0, -self.now() - 10))
            yield from self.press_and_solve(shopper)
            yield from self.until(shopper, "document.getElementById('draw-entered') !== null", 30)
            shopper.outcome = "entered"
            yield max(self.now(), 0.0) + 1
            yield from self.to_pay(shopper, timeout=60)
            return
        if shopper.role == "watcher":
            if shopper.rng.random() < 0.3:  # a reload while waiting for the sell-out news
                yield shopper.rng.uniform(2, 15)
                page.reload(timeout=30_000)
            return
        if shopper.role == "reloader":
            yield shopper.rng.uniform(0.0, 1.5)  # "is it on yet?"
            page.reload(timeout=30_000)
        else:
            yield max(self.now(), -1.0)
        yield from self.press_and_solve(shopper)
        yield from self.to_pay(shopper, timeout=45)

    # --- the run -------------------------------------------------------------------------------
    def run(self) -> dict:
        from django.conf import settings
        from playwright.sync_api import sync_playwright

        from lab import prepare
        from sales import sale_state
        from tools.browser import ARGS, CHROMIUM
        from tools.opening_mix import mix

        options = self.options
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API runs a loop here
        shoppers_made = []
        try:
            deployment = self.deploy()
            removed = prepare.leftovers_remove()
            if removed:
                log(f"removed {removed} sales and shoppers an interrupted run left behind")
            shoppers_made = prepare.shoppers_create(count=options.shoppers, secret_key=deployment.secret_key,
                                                    progress=log)  # fmt: skip
            draw_count = round(options.shoppers * options.draw_share)
            groups = ["draw"] * draw_count + ["first_come"] * (options.shoppers - draw_count)
            roles = {"first_come": _roles(FIRST_COME_ROLES, groups.count("first_come"), self.rng),
                     "draw": _roles(DRAW_ROLES, draw_count, self.rng)}  # fmt: skip
            buyers = sum(1 for role in roles["first_come"] if role != "watcher")
            units = options.stock or max(1, buyers // 2)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                people = []
                for number, (made, group) in enumerate(zip(shoppers_made, groups, strict=True)):
                    context = browser.new_context(viewport={"width": 1280, "height": 860})
                    # Logged in before the page opens (a cookie is the host's, whatever the port: the edge's too).
                    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": made.session,
                                          "url": self.base_url}])  # fmt: skip
                    people.append(Shopper(number=number, user_id=made.user_id, session=made.session, group=group,
                                          role=roles[group].pop(), sale_id=0, arrive_at=0.0, context=context,
                                          rng=random.Random(options.seed * 1000 + number)))  # fmt: skip
                self.sales_create(starts_in=options.lead + 2, first_come_units=units,
                                  draw_units=max(1, draw_count // 2))  # fmt: skip
                for shopper in people:
                    shopper.sale_id = self.sales[shopper.group]
                    shopper.arrive_at = -options.lead + self.rng.uniform(0, options.lead / 3)
                    shopper.due = shopper.arrive_at
                    shopper.steps = self.steps(shopper)
                    self.watch(shopper)
                log(f"{len(people)} shoppers: " + ", ".join(
                    f"{group} {dict(Counter(s.role for s in people if s.group == group))}"
                    for group in ("first_come", "draw")))  # fmt: skip
                sold_out_at, end_at = self.loop(people, sale_state)
                self.drain()
                for shopper in people:
                    self.outcome_read(shopper)
                for shopper in people:
                    shopper.context.close()
                browser.close()
        finally:
            if self.edge is not None:
                self.edge.stop()
            if self.deployment is not None:
                self.deployment.processes.halt_all(["web", "beat", "celery"])
            try:
                prepare.leftovers_remove()  # the sales and their orders first, then the shoppers
                prepare.cleanup(sales=None, shoppers=shoppers_made)
            except Exception as error:  # noqa: BLE001 - never hide the run's own outcome
                log(f"warning: cleanup failed: {error!r}")
        outcomes = Counter(f"{s.group} {s.role}: {s.outcome}" for s in people)
        recorded = mix(self.hits, sold_out_at=sold_out_at, end_at=end_at)
        return {
            "about": "Requests per shopper-second by kind, per phase, as real browsers made them around an"
            " opening (lab/record_opening.py, docs/performance.md). Phases in seconds from the opening.",
            "command": "python -m lab.record_opening " + " ".join(sys.argv[1:]),
            "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "shoppers": len(people),
            "lead_seconds": options.lead,
            "units": {"first_come": units, "draw": max(1, draw_count // 2)},
            "sold_out_at": sold_out_at,
            "end_at": round(end_at, 2),
            "edge": bool(self.edge),
            "outcomes": dict(sorted(outcomes.items())),
            "other_hosts": dict(self.excluded),
            **recorded,
        }

    @staticmethod
    def outcome_read(shopper: Shopper) -> None:
        """A buyer still on the item page: what it told them (sold out, not drawn, in the queue)."""
        if shopper.outcome != "submitted" or shopper.page is None:
            return
        try:
            told = shopper.page.evaluate("(e => e ? e.textContent : '')(document.getElementById('result'))")
        except Exception:  # noqa: BLE001 - a page gone: the outcome stays unknown
            return
        for words, outcome in (("sold out", "told sold out"), ("not drawn", "not drawn"), ("queue", "queued")):
            if words in told.lower():
                shopper.outcome = outcome
                return

    def loop(self, people: list[Shopper], sale_state) -> tuple[float | None, float]:
        """Run everyone's steps until `--after` seconds past the sell-out: (sold out at, end)."""
        sold_out_at: float | None = None
        checked = -1.0
        pump = None
        while True:
            now = self.now()
            for shopper in people:
                if shopper.due is None or now < shopper.due:
                    continue
                try:
                    shopper.due = next(shopper.steps)
                except StopIteration:
                    shopper.due = None
                except Exception as error:  # noqa: BLE001 - one person's failed step ends their steps only
                    log(f"shopper {shopper.number} ({shopper.group} {shopper.role}): {str(error)[:160]}")
                    shopper.outcome, shopper.due = f"failed: {type(error).__name__}", None
                if pump is None and shopper.page is not None:
                    pump = shopper.page
            if now >= 0 and sold_out_at is None and now - checked >= 0.25:
                checked = now
                if not sale_state.stock_left([self.sales["first_come"]])[self.sales["first_come"]]:
                    sold_out_at = round(now, 2)
                    log(f"first come sold out {sold_out_at:.1f} s after the opening")
            end = (max(sold_out_at, 10.0) + self.options.after) if sold_out_at is not None else SELL_OUT_WAIT_S
            if now >= end:
                return sold_out_at, now
            if len(self.pending) > 200:
                self.drain()
            if pump is not None:
                pump.wait_for_timeout(50)  # the browser's events are delivered while waiting
            else:
                time.sleep(0.05)


def _roles(shares: dict[str, float], count: int, rng: random.Random) -> list[str]:
    """`count` roles in the given shares (largest remainder), shuffled."""
    exact = {role: share * count for role, share in shares.items()}
    made = {role: int(value) for role, value in exact.items()}
    for role in sorted(exact, key=lambda r: exact[r] - made[r], reverse=True)[: count - sum(made.values())]:
        made[role] += 1
    roles = [role for role, n in made.items() for _ in range(n)]
    rng.shuffle(roles)
    return roles


def table(recorded: dict, group: str = "all") -> str:
    """Requests per shopper-second by kind, one column per phase."""
    phases = recorded["groups"][group]["phases"]
    keys = sorted({key for phase in phases.values() for key in phase["per_shopper_second"]})
    names = [name for name in ("before", "opening", "after") if name in phases]
    lines = [f"  {'kind':<34}" + "".join(f"{name:>10}" for name in names)]
    for key in keys:
        lines.append(f"  {key:<34}" + "".join(f"{phases[n]['per_shopper_second'].get(key, 0):>10.4f}" for n in names))
    lines.append(f"  {'shopper-seconds':<34}" + "".join(f"{phases[n]['shopper_seconds']:>10.0f}" for n in names))
    return "\n".join(lines)


def arguments() -> argparse.ArgumentParser:
    from tools.deploy import ROOT
    from tools.opening_mix import MIX_PATH

    parser = argparse.ArgumentParser(prog="python -m lab.record_opening", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--shoppers", type=int, default=20, help="browser contexts, one per shopper (20)")
    parser.add_argument("--lead", type=float, default=75.0, help="seconds the pages are open before the opening (75)")
    parser.add_argument("--after", type=float, default=30.0, help="seconds recorded after the sell-out (30)")
    parser.add_argument("--stock", type=int, default=0, help="first-come units (half its buyers)")
    parser.add_argument("--draw-share", type=float, default=0.25, help="share of shoppers at the draw sale (0.25)")
    parser.add_argument("--seed", type=int, default=1, help="the roles' and timings' random seed (1)")
    parser.add_argument("--edge", action="store_true", help="through Varnish (deploy/edge.vcl), as bench --edge")
    parser.add_argument("--output", default=str(MIX_PATH), help="the mix's JSON (lab/data/opening_mix.json)")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    parser.add_argument("--raw", default=str(ROOT / ".run" / f"record-opening-{stamp}" / "requests.jsonl"),
                        help="every request, one JSON line each (under .run/)")  # fmt: skip
    return parser


def main(argv: list[str]) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.local")
    import django

    django.setup()
    from tools.opening_mix import hits_save

    options = arguments().parse_args(argv)
    if options.shoppers < 4 or options.lead < 10 or not 0 <= options.draw_share < 1:
        arguments().error("--shoppers >= 4, --lead >= 10 and 0 <= --draw-share < 1")
    recorder = Recorder(options)
    recorded = recorder.run()
    hits_save(Path(options.raw), recorder.hits)
    Path(options.output).parent.mkdir(parents=True, exist_ok=True)
    Path(options.output).write_text(json.dumps(recorded, indent=1, sort_keys=False) + "\n")
    print(f"\nrequests per shopper-second by kind ({recorded['shoppers']} shoppers, sold out at"
          f" {recorded['sold_out_at']} s):\n{table(recorded)}")  # fmt: skip
    print(f"\noutcomes: {recorded['outcomes']}")
    print(f"saved {options.output} and {len(recorder.hits)} requests in {options.raw}")
    return 0 if recorded["sold_out_at"] is not None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
