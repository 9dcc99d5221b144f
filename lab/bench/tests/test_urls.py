"""The bench's own views answer at the paths its scenarios send requests to."""

import re
from pathlib import Path

from django.urls import resolve

import lab.bench.scenarios


def test_every_bench_path_the_scenarios_send_resolves_in_the_bench_urlconf():
    sent = set(re.findall(r'"(/bench/[\w/-]+)"', Path(lab.bench.scenarios.__file__).read_text()))
    assert {"/bench/floor", "/bench/naive/doSeckill", "/bench/goodsList-cold"} <= sent
    for path in sent - {"/bench/bare"}:  # bare answers below Django (lab.bench.bare)
        assert resolve(path, urlconf="lab.bench.urls").func.__module__ == "lab.bench.urls", path
