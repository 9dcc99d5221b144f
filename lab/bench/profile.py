"""What `--profile` makes of py-spy's samples: a flame graph SVG and the frames that cost most.

py-spy records the web processes in its raw (collapsed-stack) format: one line per distinct
stack, `outermost;...;innermost count`. That one file gives both the picture (an SVG drawn
here, so no Perl flamegraph script or second py-spy run is needed) and the figures the
profile records in docs/records/ quote: the share of samples under a frame (inclusive) and in
it (self).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# "Class.method (path/to/file.py:123)" -> keep the name and the file, drop the line, so the
# samples of one function add up whichever of its lines they were taken on.
_FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>[^():]+)(?::\d+)?\)$")
_SITE = re.compile(r".*/(?:site|dist)-packages/|.*/lib/python3\.\d+/")


def frame_name(raw: str) -> str:
    """A frame as it reads best: `function (package/module.py)`, the site-packages prefix gone."""
    raw = raw.strip()
    if raw.startswith("process ") or raw.startswith("thread "):
        return raw.split(":", 1)[0]
    match = _FRAME.match(raw)
    if match is None:
        return raw
    return f"{match['name']} ({_SITE.sub('', match['file'])})"


def read_collapsed(path: Path) -> Counter[tuple[str, ...]]:
    """Stack (outermost first, process lines dropped) -> samples."""
    stacks: Counter[tuple[str, ...]] = Counter()
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = tuple(frame_name(frame) for frame in stack.split(";") if not frame.startswith(("process ", "thread ")))
        if frames:
            stacks[frames] += int(count)
    return stacks


@dataclass
class Summary:
    samples: int
    inclusive: list[tuple[str, int]]  # frame -> samples with the frame anywhere on the stack
    self_time: list[tuple[str, int]]  # frame -> samples with the frame innermost

    def percent(self, samples: int) -> float:
        return 100 * samples / self.samples if self.samples else 0.0

    def lines(self, top: int = 15) -> list[str]:
        out = [f"{self.samples} samples (GIL held)", "  inclusive (under the frame):"]
        out += [f"    {self.percent(n):5.1f}%  {name}" for name, n in self.inclusive[:top]]
        out.append("  self (innermost frame):")
        out += [f"    {self.percent(n):5.1f}%  {name}" for name, n in self.self_time[:top]]
        return out

    def as_dict(self, top: int = 25) -> dict:
        return {
            "samples": self.samples,
            "inclusive_percent": {name: round(self.percent(n), 1) for name, n in self.inclusive[:top]},
            "self_percent": {name: round(self.percent(n), 1) for name, n in self.self_time[:top]},
        }


# Frames every request passes through, which say nothing about where its time goes.
_PLUMBING = re.compile(
    r"^(Thread\.|_worker |_WorkItem\.|ThreadWorker\.|SyncWorker\.|Worker\.|Arbiter\.|<module>|run \(|"
    r"convert_exception_to_response|_bootstrap|main \(|_callback_wrapper|_run_module_as_main|_run_code)"
)


def summarise(stacks: Counter[tuple[str, ...]]) -> Summary:
    total = sum(stacks.values())
    inclusive: Counter[str] = Counter()
    self_time: Counter[str] = Counter()
    for frames, count in stacks.items():
        for name in set(frames):
            if not _PLUMBING.match(name):
                inclusive[name] += count
        self_time[frames[-1]] += count
    return Summary(total, inclusive.most_common(), self_time.most_common())


# --- the SVG -------------------------------------------------------------------------------------


@dataclass
class _Node:
    name: str
    samples: int = 0
    children: dict[str, _Node] = field(default_factory=dict)


def _tree(stacks: Counter[tuple[str, ...]]) -> _Node:
    root = _Node("all")
    for frames, count in stacks.items():
        root.samples += count
        node = root
        for name in frames:
            node = node.children.setdefault(name, _Node(name))
            node.samples += count
    return root


def _colour(name: str) -> str:
    # Warm colours, steady per name: the project's own code redder, libraries yellower.
    seed = sum(name.encode()) % 60
    ours = any(f"({app}/" in name for app in ("seckill", "seckill_site", "users", "goods", "sales", "orders", "lab"))
    return f"rgb({230 if ours else 240},{80 + seed if ours else 150 + seed},{40 + seed // 2})"


def svg(stacks: Counter[tuple[str, ...]], *, title: str, width: int = 1600, row: int = 16) -> str:
    """An icicle-free flame graph (root at the bottom), frames narrower than a pixel left out;
    each box's tooltip has its name, samples and share."""
    root = _tree(stacks)
    boxes: list[tuple[float, int, float, _Node]] = []  # x, depth, width, node
    depth_max = 0

    def walk(node: _Node, x: float, depth: int) -> None:
        nonlocal depth_max
        box_width = width * node.samples / root.samples if root.samples else 0
        if box_width < 1:
            return
        boxes.append((x, depth, box_width, node))
        depth_max = max(depth_max, depth)
        for child in sorted(node.children.values(), key=lambda n: n.name):
            walk(child, x, depth + 1)
            x += width * child.samples / root.samples

    walk(root, 0.0, 0)
    top = 40
    height = top + (depth_max + 1) * row + 10
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="#fdfdf8"/>',
        f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15">{html.escape(title)}</text>',
    ]
    for x, depth, box_width, node in boxes:
        y = height - 10 - (depth + 1) * row
        share = 100 * node.samples / root.samples
        label = html.escape(node.name)
        parts.append(
            f"<g><title>{label}: {node.samples} samples, {share:.1f}%</title>"
            f'<rect x="{x:.1f}" y="{y}" width="{box_width:.1f}" height="{row - 1}" fill="{_colour(node.name)}"/>'
        )
        characters = int(box_width / 6.6)
        if characters >= 4:
            text = node.name if len(node.name) <= characters else node.name[: characters - 2] + ".."
            parts.append(f'<text x="{x + 2:.1f}" y="{y + row - 4}">{html.escape(text)}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def flamegraph(raw: Path, svg_path: Path, *, title: str) -> Summary | None:
    """Draw `raw` (py-spy's collapsed stacks) to `svg_path`; the summary, or None if empty."""
    if not raw.exists():
        return None
    stacks = read_collapsed(raw)
    if not stacks:
        return None
    svg_path.write_text(svg(stacks, title=f"{title} ({sum(stacks.values())} samples)"))
    return summarise(stacks)
