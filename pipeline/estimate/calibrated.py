"""The calibrated estimator: a linear model over character classes and runs, fitted to tokenizers.

Byte-pair tokenizers first cut text into words, number groups, punctuation runs and whitespace,
then merge bytes inside each cut. A text's token count therefore follows how many cuts it has
far better than its length does: prose is a few long words, while paths, JSON, code and tool
output are many short runs of mixed classes, which is why the seed's characters/4 undercounts
them. The features estimate those cuts, counted in C: one `bytes.translate` maps every
character to a class symbol (UTF-8 continuation bytes are deleted, so a symbol is a character)
and `bytes.count` counts symbols and symbol pairs (`xy` with x != y never overlaps itself, so a
pair count is the number of places one class meets the other). No per-character Python loop runs.

A piece is measured as the transcript spells it (a JSON string body, escapes included): that
is what the line holds, and the escapes themselves are features. Pieces longer than
`SAMPLE_ABOVE` bytes are measured on `SAMPLE_WINDOWS` evenly spaced windows and scaled up:
token density is steady within one tool output, and it bounds the cost per piece (on the
corpus, 4 windows of 128 bytes gave the same median error as 4 of 2048 within half a point:
the model's own error dominates, and a piece costs about a third of a whole-text measure). The weights
live in `calibration.py`, written by `scripts/fit-calibration`, which fits them with this very
function; the version is reported beside every calibrated figure.
"""

from __future__ import annotations

import math
from typing import Final

import msgspec

from pipeline.estimate import calibration

__all__ = [
    "FEATURES",
    "SAMPLE_ABOVE",
    "estimate_piece",
    "estimate_text",
    "features",
    "measure",
]

FEATURES: Final = (
    "piece",  # 1 for every non-empty piece
    "chars",
    "word_ends",  # a lowercase letter followed by a space
    "upper",
    "punctuation",  # ASCII punctuation other than quotes and backslashes
    "quotes",
    "backslashes",  # escapes in a JSON string body, backslashes in JSON text
    "word_then_punctuation",
    "digits",
    "latin",  # 2-byte UTF-8 characters (accents, Greek, Cyrillic, ...)
    "symbols",  # 3-byte characters outside CJK and Hangul (arrows, box drawing, dashes, ...)
    "cjk",  # CJK, kana and Hangul
    "astral",  # 4-byte characters (emoji, ...)
)
SAMPLE_WINDOW: Final = 128
SAMPLE_WINDOWS: Final = 4
SAMPLE_ABOVE: Final = SAMPLE_WINDOW * SAMPLE_WINDOWS
"""Pieces up to this many bytes are measured whole; longer ones by evenly spaced windows."""


def _symbol_table() -> bytes:
    """Byte -> class symbol; a UTF-8 lead byte stands for its character."""
    table = bytearray(256)
    for byte in range(256):
        if 0x61 <= byte <= 0x7A:
            symbol = b"a"
        elif 0x41 <= byte <= 0x5A:
            symbol = b"A"
        elif 0x30 <= byte <= 0x39:
            symbol = b"0"
        elif byte in (0x20, 0x09, 0x0A, 0x0D):
            symbol = b" "
        elif byte in (0x22, 0x5C):
            symbol = bytes([byte])
        elif byte < 0x80:
            symbol = b"."
        else:
            symbol = b"u"
        table[byte] = symbol[0]
    return bytes(table)


def _lead_table() -> bytes:
    """Lead byte -> the width class of its character (latin, symbol, cjk, astral)."""
    table = bytearray(b"x" * 256)
    for byte in range(0xC0, 0x100):
        if byte < 0xE0:
            table[byte] = ord("u")
        elif 0xE3 <= byte <= 0xED:
            table[byte] = ord("c")
        elif byte < 0xF0:
            table[byte] = ord("s")
        else:
            table[byte] = ord("e")
    return bytes(table)


_SYMBOLS: Final = _symbol_table()
_LEADS: Final = _lead_table()
_CONTINUATION: Final = bytes(range(0x80, 0xC0))


def _sample(raw: bytes) -> tuple[bytes, float]:
    """The bytes to measure and the factor that scales their counts to the whole piece."""
    size = len(raw)
    if size <= SAMPLE_ABOVE:
        return raw, 1.0
    stride = (size - SAMPLE_WINDOW) // (SAMPLE_WINDOWS - 1)
    sample = b"".join(
        raw[start : start + SAMPLE_WINDOW] for start in range(0, stride * SAMPLE_WINDOWS, stride)
    )
    return sample, size / len(sample)


def _wide(sample: bytes) -> tuple[int, int, int, int]:
    """(latin, symbols, cjk, astral) characters of UTF-8 bytes (ASCII and continuations ignored)."""
    leads = sample.translate(_LEADS, _CONTINUATION)
    return leads.count(b"u"), leads.count(b"s"), leads.count(b"c"), leads.count(b"e")


def features(raw: bytes) -> tuple[float, ...]:
    """Feature values of a piece's bytes, in `FEATURES` order (the fit script's input)."""
    sample, factor = _sample(raw)
    symbols = sample.translate(_SYMBOLS, _CONTINUATION)
    count = symbols.count
    wide = (0, 0, 0, 0) if sample.isascii() else _wide(sample)
    values = (len(symbols), count(b"a "), count(b"A"), count(b"."), count(b'"'), count(b"\\"), count(b"a."),
              count(b"0"), *wide)  # fmt: skip
    return (1.0, *(value * factor for value in values))


def _seed_tokens(chars: int, wide: tuple[int, int, int, int], factor: float) -> int:
    """The seed heuristic's weights by UTF-8 width class (see `measure`)."""
    latin, symbol, cjk, astral = wide
    ascii_chars = chars - latin - symbol - cjk - astral
    tenths = 8 * latin + 15 * symbol + 13 * cjk + 15 * astral
    return max(1, math.ceil(factor * (ascii_chars / 4 + tenths / 10)))


def measure(raw: bytes, *, scale: float = 1.0) -> tuple[int, int]:
    """(seed, calibrated) tokens of one piece as the transcript spells it.

    The seed figure applies the seed heuristic's weights: exact on ASCII pieces (the bulk of a
    transcript); on others the non-ASCII weight is taken by UTF-8 width class (2-byte 0.8,
    CJK/Hangul 1.3, other 3-byte and 4-byte 1.5), which is exact for letters, CJK, arrows and
    box drawing and weighs a dash or an ellipsis 1.5 instead of 0.8. `scale` is the content
    class's factor from the calibration. This is `features` and the weighted sum fused into
    one function, since it runs once per piece on the sweep's critical path; a test holds the
    two to the same result.
    """
    if not raw:
        return 0, 0
    sample, factor = (raw, 1.0) if len(raw) <= SAMPLE_ABOVE else _sample(raw)
    symbols = sample.translate(_SYMBOLS, _CONTINUATION)
    count = symbols.count
    (w_piece, w_chars, w_ends, w_upper, w_punct, w_quotes, w_slashes, w_word_punct, w_digits,
     w_latin, w_symbols, w_cjk, w_astral) = calibration.WEIGHTS  # fmt: skip
    linear = (
        w_chars * len(symbols)
        + w_ends * count(b"a ")
        + w_upper * count(b"A")
        + w_punct * count(b".")
        + w_quotes * count(b'"')
        + w_slashes * count(b"\\")
        + w_word_punct * count(b"a.")
        + w_digits * count(b"0")
    )
    if sample.isascii():
        seed_tokens = -(-len(raw) // 4)
    else:
        wide = _wide(sample)
        latin, symbol, cjk, astral = wide
        linear += w_latin * latin + w_symbols * symbol + w_cjk * cjk + w_astral * astral
        seed_tokens = _seed_tokens(len(symbols), wide, factor)
    return max(1, seed_tokens), max(1, round((w_piece + factor * linear) * scale))


def estimate_piece(raw: bytes, kind: str) -> int:
    """Calibrated tokens of one piece of a content class."""
    return measure(raw, scale=calibration.CLASS_SCALE.get(kind, 1.0))[1]


def estimate_text(text: str) -> int:
    """Calibrated tokens of any text, spelled as a JSON string body the way transcripts do."""
    if not text:
        return 0
    return measure(msgspec.json.encode(text)[1:-1])[1]
