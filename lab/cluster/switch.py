"""The operator's "queue everyone" switch as each web node follows it (make cluster-test's
waiting-room row, docs/waiting-room.md "What an operator does at an opening").

A shopper holding a valid pass asks every web node directly (not through the edge or the
balancer), one request after another per node, while the operator throws the switch on and then
off. A node takes the switch when it answers every later request the new way: "in the waiting
room" (WaitingCode.IN_WAITING_ROOM) once it is on, anything else once it is off. Each process
reads the room from Redis at most ROOM_SECONDS late, so no node may let the pass holder through a
request that started more than that after the switch was written.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import requests

IN_WAITING_ROOM = 500700  # waitingroom.codes.WaitingCode.IN_WAITING_ROOM
PROBE_PAUSE = 0.02  # between one node's requests: about 40 a second per node, each process hit often


@dataclass(frozen=True)
class Probe:
    node: str
    started: float  # time.monotonic()
    finished: float
    refused: bool  # answered "in the waiting room"


@dataclass(frozen=True)
class Settled:
    """How one node took a switch thrown at `since`: `seconds` from then until the first of the
    answers that were all the new way (None: its last answer was still the old way), and `gap`,
    the time between the starts of its last old answer and that first new one, the sampling's
    resolution (0 when every answer was already the new way)."""

    seconds: float | None
    gap: float


def settled(probes: Iterable[Probe], since: float, *, refused: bool) -> Settled:
    """When one node's answers (`probes`, started from `since` on) turned `refused` for good."""
    ordered = sorted((probe for probe in probes if probe.started >= since), key=lambda probe: probe.started)
    if not ordered or ordered[-1].refused != refused:
        return Settled(None, 0.0)
    first = len(ordered) - 1
    while first > 0 and ordered[first - 1].refused == refused:
        first -= 1
    gap = ordered[first].started - ordered[first - 1].started if first else 0.0
    return Settled(round(ordered[first].started - since, 3), round(gap, 3))


def switch_limit(room_seconds: float, command_seconds: float, nodes: Iterable[Settled]) -> float:
    """The longest a switch may take on a node as measured: the room's read interval, plus the
    switch's own call (it is written to Redis at some moment of it), plus the largest sampling
    gap (the node may have taken it just after its last old answer started)."""
    return round(room_seconds + command_seconds + max((node.gap for node in nodes), default=0.0), 3)


def steady(probes: list[Probe], since: float, hold: float, *, refused: bool) -> bool:
    """The node has answered only `refused` for the last `hold` seconds (and was asked in them)."""
    now = time.monotonic()
    recent = [probe for probe in probes if probe.started >= max(since, now - hold)]
    return now - since >= hold and bool(recent) and all(probe.refused == refused for probe in recent)


class Probers:
    """One thread per node asking `ask(host)` (True: refused) in a loop until stop()."""

    def __init__(self, hosts: dict[str, str], ask: Callable[[str], bool]) -> None:
        self.probes: dict[str, list[Probe]] = {node: [] for node in hosts}
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._loop, args=(node, host, ask), daemon=True) for node, host in hosts.items()
        ]
        for thread in self._threads:
            thread.start()

    def _loop(self, node: str, host: str, ask: Callable[[str], bool]) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                refused = ask(host)
            except requests.RequestException:
                refused = None
            if refused is not None:
                self.probes[node].append(Probe(node, started, time.monotonic(), refused))
            self._stop.wait(PROBE_PAUSE)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(10)
