"""The flame graph and the frame shares `make bench --profile` draws from py-spy's raw stacks."""

import xml.etree.ElementTree as ElementTree

from lab.bench.profile import flamegraph, frame_name, read_collapsed, summarise

RAW = (
    'process 7:"python -m granian";Thread.run (threading.py:982);'
    "view (/srv/.venv/lib/python3.11/site-packages/django/x.py:10);publish (/srv/seckill/services.py:205) 3\n"
    'process 7:"python -m granian";Thread.run (threading.py:982);'
    "view (/srv/.venv/lib/python3.11/site-packages/django/x.py:12);log (/srv/seckill_site/logs.py:99) 1\n"
    "not a stack line\n"
)


def test_frames_lose_their_line_and_the_site_packages_prefix():
    assert frame_name("view (/srv/.venv/lib/python3.11/site-packages/django/x.py:10)") == "view (django/x.py)"
    assert frame_name("<module> (manage.py)") == "<module> (manage.py)"


def test_shares_of_samples_inclusive_and_self(tmp_path):
    raw = tmp_path / "profile.txt"
    raw.write_text(RAW)
    stacks = read_collapsed(raw)
    assert sum(stacks.values()) == 4  # the process line is dropped, the malformed line skipped
    summary = summarise(stacks)
    inclusive, self_time = dict(summary.inclusive), dict(summary.self_time)
    assert inclusive["view (django/x.py)"] == 4  # both of its lines add up
    assert "Thread.run (threading.py)" not in inclusive  # plumbing every request passes
    assert self_time["publish (/srv/seckill/services.py)"] == 3
    assert summary.as_dict()["self_percent"]["publish (/srv/seckill/services.py)"] == 75.0


def test_the_flame_graph_is_an_svg_with_a_box_per_frame(tmp_path):
    raw = tmp_path / "profile.txt"
    raw.write_text(RAW)
    svg = tmp_path / "flame.svg"
    assert flamegraph(raw, svg, title="burst") is not None
    tree = ElementTree.parse(svg)
    titles = [element.text for element in tree.iter("{http://www.w3.org/2000/svg}title")]
    assert any(title.startswith("publish (/srv/seckill/services.py): 3 samples, 75.0%") for title in titles)
    assert flamegraph(tmp_path / "missing.txt", svg, title="none") is None
