"""A web process warms its publisher when it starts (seckill_site.publish.publisher_warm), so its
first buy does not set Celery up while the shopper waits. Each case runs in a fresh process on
the real broker, publishing to a queue of its own that nobody consumes."""

import json
import os
import subprocess
import sys
import uuid

FIRST_PUBLISH = """
import json, os, sys, django
django.setup()
from seckill_site.publish import publisher_warm, task_publish

def sockets():
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            found += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except FileNotFoundError:  # listdir's own descriptor, closed since
            pass
    return found

warmed = publisher_warm() if sys.argv[1] == "warm" else None
modules, opened = set(sys.modules), sockets()
task_publish("seckill.order_flush", kwargs={"sale_id": 0}, fast=True)
print(json.dumps({"warmed": warmed, "imported": len(set(sys.modules) - modules), "sockets": sockets() - opened}))
"""


def _first_publish(how: str, **env: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_PUBLISH, how],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "seckill_site.settings.test",
            "CELERY_TASK_DEFAULT_QUEUE": f"seckill-test-warm-{uuid.uuid4().hex[:12]}",
            **env,
        },
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_after_the_warm_the_first_publish_imports_nothing_and_connects_nowhere():
    cold, warm = _first_publish("cold"), _first_publish("warm")
    # Unwarmed, the first publish loads the result backend and the transport and connects.
    assert cold["imported"] > 0 and cold["sockets"] > 0, cold
    assert warm == {"warmed": True, "imported": 0, "sockets": 0}, warm


def test_a_broker_out_of_reach_leaves_the_first_publish_to_try():
    unreachable = "redis://127.0.0.1:9/0"  # the discard port: nothing listens there
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); from seckill_site.publish import publisher_warm;"
         " print(publisher_warm())"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "seckill_site.settings.test", "CELERY_BROKER_URL": unreachable},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False"
    assert "could not be reached" in done.stderr
