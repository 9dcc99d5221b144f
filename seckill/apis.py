"""Seckill API: captcha, one-time path, buy (the gate), result. The same steps and rate-limit
counters as the pages; no serializer runs and no PostgreSQL read is made on the way."""

from dataclasses import replace

from django.http import HttpResponse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from seckill import selectors, steps
from seckill.middleware import refusal_mark
from seckill.serializers import BuyEnvelopeSerializer, PathInputSerializer, PathSerializer, ResultSerializer
from seckill.tickets import ticket_set
from seckill.views import SECKILL_RATE
from seckill_site.api import (
    HasUserId,
    PerUserThrottle,
    api_answer,
    api_fail,
    api_ok,
    envelope,
    errors,
    id_parameter,
    throttle,
    user_id_of,
)
from seckill_site.codes import Code
from seckill_site.http import positive_int
from waitingroom.enforce import pass_refusal

SALE_ID = id_parameter("sale_id", "sale event id")


class _GateApi(APIView):
    permission_classes = [HasUserId]


class CaptchaApi(_GateApi):
    # Only the per-sale limit (seckill.steps.captcha says why).
    throttle_classes: list = []

    @extend_schema(
        tags=["seckill"],
        summary="A new captcha for this sale (PNG); its answer replaces the previous one",
        description=(
            "At most SECKILL_CAPTCHAS_PER_MINUTE (default 20) per user per sale, shared with the page "
            "/seckill/verifyCode and the spoken captcha, across all nodes: over it, 429 with code 500430, "
            "`data.retryAfter` (seconds) and a message for people saying how long to wait."
        ),
        parameters=[SALE_ID],
        responses={
            (200, "image/png"): OpenApiResponse(OpenApiTypes.BINARY, description="an arithmetic expression"),
            **errors(401, 404, 429),
        },
    )
    def get(self, request: Request, sale_id: str) -> Response | HttpResponse:
        parsed = positive_int(sale_id)
        if parsed is None:
            return api_answer(steps.NO_SUCH_SALE)
        refused = pass_refusal(request._request, sale_id=parsed, user_id=user_id_of(request))
        if refused is not None:
            return refused
        return api_answer(steps.captcha(user_id=user_id_of(request), sale_id=parsed))


class CaptchaAudioApi(_GateApi):
    throttle_classes: list = []

    @extend_schema(
        tags=["seckill"],
        summary="The spoken alternative to the captcha (WAV): digits to type as the answer",
        description=(
            "For shoppers who cannot see the picture: four digits read aloud over noise; the answer is the "
            "number heard. Replaces the previous captcha's answer and counts against the same per-sale "
            "limit as the picture (429, code 500430, `data.retryAfter`)."
        ),
        parameters=[SALE_ID],
        responses={
            (200, "audio/wav"): OpenApiResponse(OpenApiTypes.BINARY, description="four spoken digits"),
            **errors(401, 404, 429),
        },
    )
    def get(self, request: Request, sale_id: str) -> Response | HttpResponse:
        parsed = positive_int(sale_id)
        if parsed is None:
            return api_answer(steps.NO_SUCH_SALE)
        refused = pass_refusal(request._request, sale_id=parsed, user_id=user_id_of(request))
        if refused is not None:
            return refused
        return api_answer(steps.captcha(user_id=user_id_of(request), sale_id=parsed, spoken=True))


class PathApi(_GateApi):
    throttle_classes = [throttle(PerUserThrottle, "seckill.path", SECKILL_RATE)]

    @extend_schema(
        tags=["seckill"],
        summary="Exchange the captcha's answer for a one-time buy path",
        description=(
            "5 requests per 5 s per user, shared with the page /seckill/path, and at most "
            "SECKILL_PATHS_PER_MINUTE (default 10) answers per user per sale, across all nodes: over it, 429 "
            "with code 500430 and `data.retryAfter` (seconds)."
        ),
        parameters=[SALE_ID],
        request=PathInputSerializer,
        responses={200: envelope("PathEnvelope", PathSerializer()), **errors(400, 401, 404, 429)},
    )
    def post(self, request: Request, sale_id: str) -> Response | HttpResponse:
        parsed = positive_int(sale_id)
        if parsed is None:
            return api_answer(steps.NO_SUCH_SALE)
        refused = pass_refusal(request._request, sale_id=parsed, user_id=user_id_of(request))
        if refused is not None:
            return refused
        data = request.data
        raw_answer = data.get("verifyCode") if hasattr(data, "get") else None
        answer = steps.path(user_id=user_id_of(request), sale_id=parsed, raw_answer=raw_answer)
        if answer.code is Code.SUCCESS:
            answer = replace(answer, data={"path": answer.data})  # the API names it; the page's is bare
        return api_answer(answer)


class BuyApi(_GateApi):
    # Counted inside the gate (reserve.lua), after the refusals that need no network call.
    throttle_classes: list = []

    @extend_schema(
        tags=["seckill"],
        summary="Buy one unit: the seckill gate. Answers fast; poll /result for the order",
        description=(
            "`code` 0 means queued; sold out, already bought, not started and ended answer HTTP 200 with "
            "their codes. Sold out, not started and ended are answered first and cost nothing: they neither "
            "count against the limit (5 requests per 5 s per user and sale, shared with the page's doSeckill) nor "
            "use up the path."
        ),
        parameters=[
            SALE_ID,
            OpenApiParameter("path", str, OpenApiParameter.PATH, description="from POST .../path"),
        ],
        request=None,
        responses={200: BuyEnvelopeSerializer, **errors(401, 403, 404, 429)},
    )
    def post(self, request: Request, sale_id: str, path: str) -> Response | HttpResponse:
        parsed = positive_int(sale_id)
        if parsed is None:
            return api_answer(steps.NO_SUCH_SALE)
        user_id = user_id_of(request)
        refused = pass_refusal(request._request, sale_id=parsed, user_id=user_id)
        if refused is not None:
            return refused
        answer = steps.buy(user_id=user_id, sale_id=parsed, path=path)
        response = refusal_mark(api_answer(answer), answer.code)
        if answer.code is Code.SUCCESS:
            ticket_set(response, request=request._request, user_id=user_id, sale_id=parsed)
        return response


class ResultApi(_GateApi):
    STATES = {
        selectors.QUEUED: "queued",
        selectors.FAILED: "failed",
        selectors.ENTERED: "entered",
        selectors.NOT_DRAWN: "not drawn",
    }

    @extend_schema(
        tags=["seckill"],
        summary="The result of my purchase: the order id once written, 0 while queued, -1 failed, "
        "-2 entered in the sale's draw, -3 not drawn",
        parameters=[SALE_ID],
        responses={200: envelope("ResultEnvelope", ResultSerializer()), **errors(401, 404)},
    )
    def get(self, request: Request, sale_id: str) -> Response:
        parsed = positive_int(sale_id)
        if parsed is None:
            return api_fail(Code.NOT_FOUND, _("no such sale"))
        order_id = selectors.seckill_result(user_id=user_id_of(request), sale_id=parsed)
        return api_ok({"orderId": order_id, "state": self.STATES.get(order_id, "ordered")})
