"""Off-the-shelf OCR engines, as a scalper would run them: no training, default settings."""

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable

Reader = Callable[[bytes], str]


def ddddocr_reader(*, beta: bool) -> Reader:
    import ddddocr

    engine = ddddocr.DdddOcr(beta=beta, show_ad=False)
    return engine.classification


def tesseract_reader(*, page_mode: str = "7") -> Reader:
    """Tesseract limited to the characters a captcha can hold; page mode 7 reads one text
    line, 6 a block of lines (joined)."""
    binary = shutil.which("tesseract")
    if binary is None:
        raise RuntimeError("tesseract not found: install the Debian package tesseract-ocr")
    folder = tempfile.mkdtemp(prefix="captcha-attack-")
    counter = iter(range(10**9))

    def read(png: bytes) -> str:
        path = os.path.join(folder, f"{next(counter)}.png")  # one file per call: threads read in parallel
        with open(path, "wb") as file:
            file.write(png)
        done = subprocess.run(
            [binary, path, "stdout", "--psm", page_mode, "-c", "tessedit_char_whitelist=0123456789+-x*=?"],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        )
        os.unlink(path)
        return "".join(done.stdout.split())

    return read
