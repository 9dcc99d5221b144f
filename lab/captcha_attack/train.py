"""The cheapest model an attacker could train on our own generator (its code is public):
a one-hidden-layer network on downscaled pixels, one softmax-like block per character slot.

Slots: the old captcha is five characters in fixed 17 px cells (digit, operator, digit,
operator, digit); the new one is a column sum, right-aligned, so its slots are the tens and
units of the top number, the operator, and the tens and units of the bottom one ("_" for an
absent tens digit)."""

import re
from collections.abc import Callable

import numpy as np
from PIL import Image

BLANK = "_"
ALPHABET = "0123456789+-*" + BLANK


def slots_old(expression: str) -> str:
    return expression


def slots_new(expression: str) -> str:
    left, operator, right = re.match(r"^(\d+)([+*-])(\d+)$", expression).groups()
    return f"{left:{BLANK}>2}{operator}{right:{BLANK}>2}"


def features(png_image: Image.Image, size: tuple[int, int]) -> np.ndarray:
    grey = png_image.convert("L").resize(size, Image.Resampling.BILINEAR)
    return 1.0 - np.asarray(grey, dtype=np.float32).ravel() / 255.0


def _one_hot(labels: list[str]) -> np.ndarray:
    slots = len(labels[0])
    encoded = np.zeros((len(labels), slots * len(ALPHABET)), dtype=np.int8)
    for row, label in enumerate(labels):
        for slot, char in enumerate(label):
            encoded[row, slot * len(ALPHABET) + ALPHABET.index(char)] = 1
    return encoded


def _decode(scores: np.ndarray, slots: int) -> list[str]:
    blocks = scores.reshape(len(scores), slots, len(ALPHABET))
    return ["".join(ALPHABET[i] for i in row) for row in blocks.argmax(axis=2)]


def train_and_test(
    sample: Callable[[], tuple[str, Image.Image]],
    *,
    slots: Callable[[str], str],
    value: Callable[[str], int],
    size: tuple[int, int],
    train: int,
    test: int,
    seed: int = 0,
) -> tuple[float, float]:
    """Train on `train` fresh samples, solve `test` more; (solve rate, per-slot accuracy)."""
    from sklearn.neural_network import MLPClassifier

    def batch(count: int) -> tuple[np.ndarray, list[str], list[str]]:
        expressions, rows = [], []
        for _ in range(count):
            expression, image = sample()
            expressions.append(expression)
            rows.append(features(image, size))
        return np.stack(rows), [slots(e) for e in expressions], expressions

    x_train, y_train, _ = batch(train)
    x_test, y_test, expressions = batch(test)
    model = MLPClassifier(
        hidden_layer_sizes=(384,), max_iter=60, early_stopping=True, n_iter_no_change=6, random_state=seed
    )
    model.fit(x_train, _one_hot(y_train))
    predicted = _decode(model.predict_proba(x_test), len(y_test[0]))
    solved = 0
    for guess, expression in zip(predicted, expressions, strict=True):
        try:
            solved += value(guess.replace(BLANK, "")) == value(expression)
        except ValueError:
            pass
    slot_hits = sum(
        a == b for guess, truth in zip(predicted, y_test, strict=True) for a, b in zip(guess, truth, strict=True)
    )
    return solved / test, slot_hits / (test * len(y_test[0]))
