"""Request ids and the request log: one line per request, and the same id on the order writer's lines.

The id (the balancer's X-Request-ID, or a new one) is returned in the response, rides on the
Celery messages the request publishes as a header, and is restored in the worker.
`RequestContextFilter` puts it, and the fields views add with `log_context_set`, on every record."""

from __future__ import annotations

import logging
import logging.config
import os
import re
import time
from contextvars import ContextVar
from typing import Any

from celery.signals import after_setup_logger, before_task_publish, task_postrun, task_prerun
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.http import HttpRequest, HttpResponse

REQUEST_ID_HEADER = "X-Request-ID"
REQUEST_ID_META = "HTTP_X_REQUEST_ID"
# The Celery message header carrying it (not a Celery field name, so it never shadows one).
TASK_HEADER = "x_request_id"
# Accepted from outside only if it looks like an id: it is echoed and logged, so nothing else.
_VALID_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def request_id_for(incoming: str) -> str:
    """The client's X-Request-ID if it looks like an id, else 32 new random hex characters."""
    return incoming if _VALID_ID.match(incoming) else os.urandom(16).hex()


request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
_context_var: ContextVar[dict[str, Any] | None] = ContextVar("log_context", default=None)

request_logger = logging.getLogger("seckill.request")


def log_context_set(**fields: Any) -> None:
    """Add fields (sale, outcome, ...) to this request's log lines, the request line included."""
    context = _context_var.get()
    if context is not None:
        context.update(fields)


class RequestContextFilter(logging.Filter):
    """Puts the request id and the request's fields on every record (None outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id_var.get()
        for name, value in (_context_var.get() or {}).items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


def _user_id(request: HttpRequest) -> int | None:
    """The user id if the request already knows it (a session read, DRF's user); never loads it."""
    # A session whose load failed has no cache: reading it again would turn its 503 into a 500.
    loaded = getattr(getattr(request, "session", None), "_session_cache", None)
    if loaded:
        raw = loaded.get(SESSION_KEY)
        if raw is not None:
            return int(raw)
    user = request.__dict__.get("user")
    if user is not None and not hasattr(user, "_wrapped") and getattr(user, "is_authenticated", False):
        return user.pk  # set by DRF's authentication, a real user rather than the lazy one
    return None


def _path_without_secrets(request: HttpRequest) -> str:
    """The path with the one-time seckill path blanked out: it stays a secret while unused."""
    match = getattr(request, "resolver_match", None)
    secret = match.kwargs.get("path") if match is not None else None
    return request.path.replace(secret, "<path>") if secret else request.path


def _request_line(request: HttpRequest, response: HttpResponse, started: float) -> None:
    # Logger.info would walk the stack for caller fields no formatter here prints.
    path = _path_without_secrets(request)
    record = request_logger.makeRecord(
        request_logger.name,
        logging.INFO,
        "(unknown file)",
        0,
        "%s %s %s",
        (request.method, path, response.status_code),
        None,
        extra={
            "method": request.method,
            "path": path,
            "status": response.status_code,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
            "user_id": _user_id(request),
        },
    )
    request_logger.handle(record)


class RequestLogMiddleware:
    """Every line a request logs carries its id; the request logs one line of its own."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # META, not request.headers, which builds a dict of every header first.
        request_id = request_id_for(request.META.get(REQUEST_ID_META, ""))
        request.request_id = request_id  # type: ignore[attr-defined]
        id_token = request_id_var.set(request_id)
        context_token = _context_var.set({})
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response[REQUEST_ID_HEADER] = request_id
            if request_logger.isEnabledFor(logging.INFO):
                _request_line(request, response, started)
            return response
        finally:
            _context_var.reset(context_token)
            request_id_var.reset(id_token)


@before_task_publish.connect(dispatch_uid="seckill.logs.publish")
def task_publish_add_request_id(headers: dict | None = None, **_signal) -> None:
    """`before_task_publish`: a message published during a request carries its id."""
    request_id = request_id_var.get()
    if request_id is not None and headers is not None:
        headers.setdefault(TASK_HEADER, request_id)


@task_prerun.connect(dispatch_uid="seckill.logs.prerun")
def task_prerun_set_request_id(task=None, **_signal) -> None:
    """`task_prerun`: the task's log lines carry the id of the request that queued it."""
    request_id = getattr(task.request, TASK_HEADER, None) if task is not None else None
    request_id_var.set(request_id)
    _context_var.set({"task": task.name} if task is not None else {})


@task_postrun.connect(dispatch_uid="seckill.logs.postrun")
def task_postrun_clear_request_id(**_signal) -> None:
    request_id_var.set(None)
    _context_var.set(None)


@after_setup_logger.connect(dispatch_uid="seckill.logs.worker")
def worker_logs_like_django(**_signal) -> None:
    """Production (LOG_JSON): a worker logs through Django's LOGGING, as the web processes do."""
    if getattr(settings, "LOG_JSON", False):
        logging.config.dictConfig(settings.LOGGING)
