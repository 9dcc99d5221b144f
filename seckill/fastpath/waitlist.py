"""A draw's waiting list below Django (docs/waiting-list.md): a shopper's poll of
`/seckill/waitingList/<sale>` carrying their wait ticket is answered from Redis
(seckill.waiting_list), one pipeline and no session load, so the entrants who were not drawn
never reach Django while they wait for a unit to come back."""

from __future__ import annotations

import re

from seckill.fastpath.waiting import WaitTicketPoll
from seckill.waiting_list import waiting_list_body, waiting_list_data

LIST_PATH = re.compile(r"^/seckill/waitingList/([^/]+)$")


class WaitingListStatus(WaitTicketPoll):
    """Answers GET /seckill/waitingList/<sale> once Redis holds the list."""

    path = LIST_PATH

    def answer(self, sale_id: int, user_id: int) -> bytes | None:
        data = waiting_list_data(sale_id, user_id)
        return None if data is None else waiting_list_body(data)  # not in Redis: Django publishes it again
