"""Prometheus metrics: the exporter, the web requests, and the shop's state, read only when
/metrics is scraped (`ShopCollector`). Counting never reaches the network; each app keeps its
own counters. With PROMETHEUS_MULTIPROC_DIR set in the environment, each process writes its own
file and a scrape sums them."""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Any

from celery.signals import worker_init
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from celery_app import app

logger = logging.getLogger(__name__)

MULTIPROCESS = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))

HTTP_REQUESTS = Counter(
    "seckill_http_requests_total",
    "HTTP requests answered, by view route, method and status",
    ["view", "method", "status"],
)
HTTP_LATENCY = Histogram(
    "seckill_http_request_duration_seconds",
    "Time from the first middleware to the response, by view route",
    ["view"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)


# Source name -> a function returning its metric families; apps add theirs in AppConfig.ready().
ScrapeSource = Callable[[], list[GaugeMetricFamily]]
_scrape_sources: dict[str, ScrapeSource] = {}


def scrape_source_add(name: str, figures: ScrapeSource) -> None:
    _scrape_sources[name] = figures


def _queue_figures() -> list[GaugeMetricFamily]:
    depth = GaugeMetricFamily("seckill_queue_depth", "Messages waiting in the broker queue", labels=["queue"])
    queue, messages = _queue_depth()
    depth.add_metric([queue], messages)
    return [depth]


class ShopCollector(Collector):
    """The figures of every scrape source; one that fails is left out, 0 in seckill_shop_metrics_up."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily("seckill_shop_metrics_up", "Whether the shop figures could be read", labels=["source"])
        for name, figures in {**_scrape_sources, "broker": _queue_figures}.items():
            try:
                yield from figures()
                up.add_metric([name], 1)
            except Exception:  # a scrape during an outage still answers, with the outage in `up`
                logger.warning("metrics: could not read the %s figures", name, exc_info=True)
                up.add_metric([name], 0)
        yield up


def _queue_depth() -> tuple[str, int]:
    """The default queue's ready messages: a passive declare answers on Redis and RabbitMQ alike."""
    queue = app.conf.task_default_queue
    with app.connection_for_read() as connection:
        connection.ensure_connection(max_retries=0, timeout=settings.READINESS_TIMEOUT)
        try:
            channel: Any = connection.default_channel  # kombu's virtual and amqp channels both declare
            _name, messages, _consumers = channel.queue_declare(queue=queue, passive=True)
        except connection.channel_errors:  # not declared yet (no worker ever started): nothing waits
            messages = 0
    return queue, messages


def exposition() -> bytes:
    """The text format of every metric this node (or, multiprocess, this directory) holds."""
    if MULTIPROCESS:
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        counted = generate_latest(registry)
    else:
        counted = generate_latest(REGISTRY)
    shop = CollectorRegistry()
    shop.register(ShopCollector())
    return counted + generate_latest(shop)


def metrics_allowed(request: HttpRequest) -> bool:
    """Whether the caller may read /metrics and /readyz's details: the bearer METRICS_TOKEN, or
    REMOTE_ADDR (never a forwarded header, nor loopback by default) in METRICS_ALLOWED_NETWORKS."""
    token = settings.METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer ") and secrets.compare_digest(header[7:].strip(), token):
        return True
    if not settings.METRICS_ALLOWED_NETWORKS:
        return False
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(network, strict=False) for network in settings.METRICS_ALLOWED_NETWORKS)


def metrics_response() -> HttpResponse:
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)


class RequestMetricsMiddleware:
    """Times the whole stack (first in MIDDLEWARE), labelled by URL route, never the raw path."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        if match is not None:
            view = match.route
        else:  # answered before any URL was resolved: a static file (WhiteNoise), a known sold-out
            view = getattr(request, "metrics_view", None) or (
                "<static>" if request.path.startswith(settings.STATIC_URL) else "<unresolved>"
            )
        HTTP_REQUESTS.labels(view, request.method, str(response.status_code)).inc()
        HTTP_LATENCY.labels(view).observe(time.perf_counter() - started)
        return response


@worker_init.connect(dispatch_uid="seckill.metrics.worker_exporter")
def worker_exporter_start(**_signal) -> None:
    """Serve the worker's metrics, its children's summed, on CELERY_METRICS_PORT when set."""
    port = os.environ.get("CELERY_METRICS_PORT")
    if not port:
        return
    from prometheus_client import start_http_server

    if MULTIPROCESS:
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
    else:
        logger.warning("CELERY_METRICS_PORT without PROMETHEUS_MULTIPROC_DIR: prefork children's counts are lost")
        registry = REGISTRY
    start_http_server(int(port), addr=os.environ.get("CELERY_METRICS_ADDR", "127.0.0.1"), registry=registry)


FOLD_SECONDS = 1.0


class ThreadCounts:
    """Requests counted per thread without a lock, folded into HTTP_REQUESTS and HTTP_LATENCY
    every FOLD_SECONDS and by `fold()`; only its own thread writes an entry, so nothing is lost
    or counted twice. After each fold, `fold_listeners` get (key, count) per series folded, then
    `tick_listeners` are called."""

    def __init__(self) -> None:
        self._bounds = HTTP_LATENCY._upper_bounds  # the buckets' upper bounds, +Inf last
        self.fold_listeners: list[Callable[[tuple, int], None]] = []
        self.tick_listeners: list[Callable[[], None]] = []
        self._forget_threads()
        os.register_at_fork(after_in_child=self._forget_threads)

    def _forget_threads(self) -> None:
        """Start afresh, also in a forked child (the parent's threads are gone, the lock may be held)."""
        self._lock = threading.Lock()  # between folders only; answering threads never take it
        self._threads: list[tuple[threading.Thread, dict]] = []
        self._folded: dict[tuple[int, tuple], tuple[int, float, list[int]]] = {}
        self._folder: threading.Thread | None = None
        self._local = threading.local()

    def _mine(self) -> dict:
        try:
            return self._local.counts
        except AttributeError:
            counts = self._local.counts = {}
            with self._lock:
                self._threads.append((threading.current_thread(), counts))
                if self._folder is None:
                    self._folder = threading.Thread(target=self._fold_forever, name="metrics-folder", daemon=True)
                    self._folder.start()
            return counts

    def add(self, key: tuple, view: str, method: str, status: str, seconds: float) -> None:
        """Count one answer of `seconds` in the series `key` (which the listeners receive)."""
        counts = self._mine()
        entry = counts.get(key)
        if entry is None:
            entry = counts[key] = [view, method, status, 0, 0.0, [0] * len(self._bounds)]
        entry[3] += 1
        entry[4] += seconds
        entry[5][bisect_left(self._bounds, seconds)] += 1

    def _fold_forever(self) -> None:
        while True:
            time.sleep(FOLD_SECONDS)
            try:
                self.fold()
            except Exception:  # a listener's failure must not end the folding  # noqa: BLE001
                logger.warning("metrics: folding the per-thread counts failed", exc_info=True)

    def fold(self) -> dict[tuple, int]:
        """Fold what every thread counted since the last fold; returns the counts per series."""
        folded: dict[tuple, int] = {}
        with self._lock:
            for thread, counts in list(self._threads):
                ended = not thread.is_alive()  # before the read: an ended thread adds nothing after it
                for key, entry in list(counts.items()):
                    view, method, status = entry[0], entry[1], entry[2]
                    count, seconds, buckets = entry[3], entry[4], list(entry[5])
                    mark = (id(counts), key)
                    before_count, before_seconds, before_buckets = self._folded.get(mark, (0, 0.0, None))
                    if count == before_count:
                        continue
                    self._folded[mark] = (count, seconds, buckets)
                    grown = count - before_count
                    HTTP_REQUESTS.labels(view, method, status).inc(grown)
                    latency = HTTP_LATENCY.labels(view)
                    # Histogram has no "observe n at once": its own counters, as observe() adds to them.
                    latency._sum.inc(seconds - before_seconds)
                    for index, n in enumerate(buckets):
                        n -= before_buckets[index] if before_buckets else 0
                        if n:
                            latency._buckets[index].inc(n)
                    folded[key] = folded.get(key, 0) + grown
                if ended:  # folded for the last time: let go of its entries
                    self._threads.remove((thread, counts))
                    for key in counts:
                        self._folded.pop((id(counts), key), None)
        for key, count in folded.items():
            for listener in self.fold_listeners:
                listener(key, count)
        for tick in self.tick_listeners:
            tick()
        return folded


# The fast path's counts (seckill.fastpath); the seckill app listens for its attempt outcomes.
fast_counts = ThreadCounts()
