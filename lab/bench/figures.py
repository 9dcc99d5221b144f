"""The bench's figures beside the HTTP scenarios: the database's single hot-row purchase rate,
Redis memory per reservation, and the memory of the web and worker processes.

The hot-row rate is the yardstick for the order writer: one transaction per purchase, each
taking the sale's row lock from its UPDATE to its COMMIT, is as fast as purchases can land one
by one on this database; a writer that batches should beat it by a multiple.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import psutil
from django.db import connection
from redis.cluster import RedisCluster

from orders.models import Order
from orders.services import ORDER_NUMBER_SEQUENCE
from sales.models import Sale


def _purchase_sql(*, sale: str, goods_id: int, user_id: int) -> list[str]:
    """One purchase the way one transaction per order makes it: the conditional UPDATE of the hot
    row and the order's INSERT. The order writer also inserts its seckill order and an audit row
    in that transaction, so this is an upper bound on the one-by-one rate."""
    sale_table, order_table = Sale._meta.db_table, Order._meta.db_table
    return [
        f"UPDATE {sale_table} SET stock_count = stock_count - 1 WHERE id = {sale} AND stock_count > 0",
        f"INSERT INTO {order_table} (order_no, user_id, goods_id, sale_id, goods_name, goods_names, price, quantity,"
        f" status, created_at, pay_deadline, cancel_reason) VALUES ('B' || nextval('{ORDER_NUMBER_SEQUENCE}'),"
        f" {user_id}, {goods_id}, {sale}, 'bench hot row', '{{}}', 1, 1, 'unpaid', now(),"
        f" now() + interval '15 minutes', '')",
    ]


def hot_row_rate(*, sale_id: int, goods_id: int, user_id: int, seconds: float, clients: int, work: Path) -> dict:
    """Purchases per second on one sale's row: pgbench with a custom script when installed
    (Debian's postgresql-client), else the same two statements from `clients` psycopg2 threads."""
    if shutil.which("pgbench"):
        return _pgbench(sale_id=sale_id, goods_id=goods_id, user_id=user_id, seconds=seconds, clients=clients,
                        work=work)  # fmt: skip
    return _psycopg2_loop(sale_id=sale_id, goods_id=goods_id, user_id=user_id, seconds=seconds, clients=clients)


def _pgbench(*, sale_id: int, goods_id: int, user_id: int, seconds: float, clients: int, work: Path) -> dict:
    script = work / "hot-row.sql"
    statements = _purchase_sql(sale=":sale", goods_id=goods_id, user_id=user_id)
    script.write_text("BEGIN;\n" + "".join(f"{sql};\n" for sql in statements) + "END;\n")
    params = connection.get_connection_params()
    command = ["pgbench", "-n", "-M", "prepared", "-c", str(clients), "-j", str(min(clients, 2)),
               "-T", str(max(1, round(seconds))), "-f", str(script), "-D", f"sale={sale_id}"]  # fmt: skip
    for flag, key in (("-h", "host"), ("-p", "port"), ("-U", "user")):
        if params.get(key):
            command += [flag, str(params[key])]
    command.append(params.get("dbname") or params["database"])
    env = dict(os.environ, PGPASSWORD=str(params.get("password") or ""))
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=seconds + 60)
    (work / "hot-row.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise RuntimeError(f"pgbench failed (exit {done.returncode}): {done.stderr.strip()[-1000:]}")
    tps = re.search(r"tps = ([\d.]+) \(without initial connection time\)", done.stdout)
    count = re.search(r"number of transactions actually processed: (\d+)", done.stdout)
    latency = re.search(r"latency average = ([\d.]+) ms", done.stdout)
    return {
        "tool": "pgbench",
        "clients": clients,
        "purchases": int(count.group(1)) if count else None,
        "purchases_per_second": round(float(tps.group(1)), 1) if tps else None,
        "latency_ms": float(latency.group(1)) if latency else None,
    }


def _psycopg2_loop(*, sale_id: int, goods_id: int, user_id: int, seconds: float, clients: int) -> dict:
    import psycopg2

    params = connection.get_connection_params()
    statements = _purchase_sql(sale="%(sale)s", goods_id=goods_id, user_id=user_id)
    counts = [0] * clients
    deadline = time.monotonic() + seconds

    def purchase_loop(index: int) -> None:
        with psycopg2.connect(**{k: v for k, v in params.items() if k != "cursor_factory"}) as db:
            with db.cursor() as cursor:
                while time.monotonic() < deadline:
                    for sql in statements:
                        cursor.execute(sql, {"sale": sale_id})
                    db.commit()
                    counts[index] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=purchase_loop, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    return {
        "tool": "psycopg2 loop",
        "clients": clients,
        "purchases": sum(counts),
        "purchases_per_second": round(sum(counts) / elapsed, 1),
        "latency_ms": None,
    }


# --- memory ------------------------------------------------------------------------------------


def redis_used_memory(redis) -> int:
    """used_memory of the server, or the sum over a Redis Cluster's primaries (a plain INFO
    on the cluster client asks one node; a sale's keys live on the one owning its hash tag).
    Replicas hold a copy of the same again."""
    if isinstance(redis, RedisCluster):
        answers = redis.info("memory", target_nodes=RedisCluster.PRIMARIES)
        if "used_memory" in answers:  # a cluster of one primary: its answer alone
            answers = {"only": answers}
        return sum(int(answer["used_memory"]) for answer in answers.values())
    return int(redis.info("memory")["used_memory"])


def process_memory(pids: dict[str, list[int]]) -> dict[str, list[dict]]:
    """kind -> one entry per process: RSS and USS (the pages only it holds) in MB. USS is the
    honest cost of a forked worker, whose RSS counts the pages it still shares with its parent."""
    out: dict[str, list[dict]] = {}
    for kind, members in pids.items():
        for pid in members:
            try:
                process = psutil.Process(pid)
                info = process.memory_full_info()
                name = " ".join(process.cmdline()[:3])[-60:]
            except psutil.Error:
                continue
            out.setdefault(kind, []).append(
                {
                    "pid": pid,
                    "rss_mb": round(info.rss / 2**20, 1),
                    "uss_mb": round(info.uss / 2**20, 1),
                    "command": name,
                }  # fmt: skip
            )
    return out
