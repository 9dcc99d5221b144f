"""A TCP relay with a settable one-way latency, as its own process (this kernel has no netem).

    python -m lab.cluster.relay LISTEN_HOST:PORT TARGET_HOST:PORT [--control FILE]

Every chunk read from one side is written to the other `delay` seconds after it arrived, in
order (a link's latency, not a stall per chunk). FILE, re-read every 0.2 s, holds the delay in
milliseconds (absent or empty: 0). Packet loss is iptables' job (`-m statistic`), on the
host's side of the link: TCP then retransmits as it would on a lossy network.

Used by `make partition-test` for PostgreSQL (the machine's server on 127.0.0.1, reached from
the namespaces through 10.231.0.1:5432) and for the slow link to a Redis primary.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from pathlib import Path

delay = 0.0


async def control(path: Path | None) -> None:
    global delay
    while path is not None:
        try:
            text = path.read_text().strip()
            delay = float(text) / 1000 if text else 0.0
        except (OSError, ValueError):
            delay = 0.0
        await asyncio.sleep(0.2)


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    queue: asyncio.Queue = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, chunk = await queue.get()
            if chunk is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(chunk)
            await writer.drain()

    sender = asyncio.create_task(deliver())
    try:
        while chunk := await reader.read(65536):
            await queue.put((time.monotonic() + delay, chunk))
        await queue.put((0, None))
        await sender
    except (ConnectionError, OSError):
        sender.cancel()
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def serve(listen: tuple[str, int], target: tuple[str, int], control_file: Path | None) -> None:
    async def handle(client_reader, client_writer):
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*target)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pump(client_reader, upstream_writer), pump(upstream_reader, client_writer))

    server = await asyncio.start_server(handle, *listen, reuse_address=True, backlog=512)
    asyncio.create_task(control(control_file))
    async with server:
        await server.serve_forever()


def address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("listen", type=address)
    parser.add_argument("target", type=address)
    parser.add_argument("--control", type=Path)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.listen, args.target, args.control))


if __name__ == "__main__":
    main()
