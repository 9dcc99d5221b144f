"""The partition test's latency relay (lab/cluster/relay.py), in this process's event loop in
front of a loopback echo server: it forwards both ways, delays each chunk by the control file's
milliseconds as a link's latency (not a stall per chunk), and keeps the bytes in order."""

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from lab.cluster import relay
from tools.net import free_port


def run(coroutine) -> None:
    """asyncio.run in a thread of its own: a browser test earlier in the same process may have
    left an event loop running in this one (Playwright's sync API), where asyncio.run refuses."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coroutine).result()


async def echo_server() -> tuple[asyncio.AbstractServer, int]:
    async def echo(reader, writer):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def relayed(control_file, check) -> None:
    """Run `check(reader, writer)` over a connection through a relay in front of an echo server."""
    server, echo_port = await echo_server()
    port = free_port()
    serving = asyncio.create_task(relay.serve(("127.0.0.1", port), ("127.0.0.1", echo_port), control_file))
    try:
        for _ in range(100):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)  # the control file read once
        await check(reader, writer)
        writer.close()
    finally:
        serving.cancel()
        server.close()
        relay.delay = 0.0


async def exchange(reader, writer, data: bytes) -> float:
    started = time.monotonic()
    writer.write(data)
    await writer.drain()
    got = await asyncio.wait_for(reader.readexactly(len(data)), 10)
    assert got == data
    return time.monotonic() - started


def test_without_a_control_file_it_forwards_at_once():
    async def check(reader, writer):
        assert await exchange(reader, writer, b"hello") < 0.2

    run(relayed(None, check))


def test_the_control_files_milliseconds_delay_each_way(tmp_path):
    control = tmp_path / "delay"
    control.write_text("150\n")

    async def check(reader, writer):
        assert relay.delay == 0.15
        assert 0.3 <= await exchange(reader, writer, b"ping") < 1.5  # there and back

    run(relayed(control, check))


def test_chunks_in_a_row_share_one_delay_and_keep_their_order(tmp_path):
    control = tmp_path / "delay"
    control.write_text("200")

    async def check(reader, writer):
        started = time.monotonic()
        sent = b""
        for number in range(10):
            chunk = f"chunk {number};".encode()
            writer.write(chunk)
            await writer.drain()
            sent += chunk
            await asyncio.sleep(0.01)
        got = await asyncio.wait_for(reader.readexactly(len(sent)), 10)
        assert got == sent
        assert time.monotonic() - started < 1.5  # ten stalls of 2 x 200 ms would take 4 s

    run(relayed(control, check))


@pytest.mark.parametrize(("text", "seconds"), [("", 0.0), ("not a number", 0.0), ("2500", 2.5)])
def test_the_control_file_is_read_as_milliseconds(tmp_path, text, seconds):
    control = tmp_path / "delay"
    control.write_text(text)

    async def read_once():
        task = asyncio.create_task(relay.control(control))
        await asyncio.sleep(0.05)
        task.cancel()

    relay.delay = 9.0
    try:
        run(read_once())
        assert relay.delay == seconds
    finally:
        relay.delay = 0.0


def test_an_address_is_its_host_and_port():
    assert relay.address("10.231.0.1:5432") == ("10.231.0.1", 5432)
    assert relay.address("localhost:80") == ("localhost", 80)
