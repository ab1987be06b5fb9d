"""Fixed text corpora for synthetic transcripts: code, logs, prose and prompts in several languages.

Pure data (tuples of strings). Code snippets use ``@N``/``@M`` (identifiers), ``@F`` (a field)
and ``@K`` (a number) as placeholders, filled in by :mod:`pipeline.testing._textbank`.
"""

# ruff: noqa: RUF001  # Chinese/Japanese punctuation and Cyrillic letters are the point of these corpora

from __future__ import annotations

__all__ = [
    "ASSISTANT_EN",
    "CODE",
    "COMMANDS",
    "EMOJI",
    "EXTENSIONS",
    "FOREIGN_PROMPTS",
    "FOREIGN_REPLIES",
    "IDENT_PARTS",
    "LOG_LINES",
    "PROJECT_NAMES",
    "PROJECT_ROOTS",
    "PROMPTS_EN",
    "SLUG_WORDS",
    "SUBAGENT_PROMPTS",
    "THINKING_EN",
]

CODE: dict[str, tuple[str, ...]] = {
    "python": (
        (
            "def @N(@F: str, *, limit: int = @K) -> list[str]:\n"
            '    """Return the @F entries of @M, at most ``limit``."""\n'
            "    items = [x for x in @M(@F) if x]\n"
            "    if len(items) > limit:\n"
            "        items = items[:limit]\n"
            "    return sorted(items)\n"
        ),
        (
            "class @NError(Exception):\n"
            '    """Raised when @M cannot read @F."""\n'
            "\n"
            "    def __init__(self, @F: str, code: int = @K) -> None:\n"
            '        super().__init__(f"{@F}: code {code}")\n'
            "        self.code = code\n"
        ),
        (
            "@dataclass(frozen=True, slots=True)\n"
            "class @N:\n"
            "    @F: str\n"
            "    count: int = @K\n"
            "    tags: tuple[str, ...] = ()\n"
            "\n"
            "    def with_count(self, n: int) -> @N:\n"
            "        return replace(self, count=n)\n"
        ),
        (
            "async def @N(client: httpx.AsyncClient, @F: str) -> dict[str, Any]:\n"
            '    resp = await client.get(f"/api/v1/@M/{@F}", timeout=@K)\n'
            "    resp.raise_for_status()\n"
            "    return resp.json()\n"
        ),
        (
            "def test_@N_handles_empty_@F(tmp_path: Path) -> None:\n"
            '    path = tmp_path / "@M.jsonl"\n'
            '    path.write_bytes(b"")\n'
            "    result = @M(path)\n"
            "    assert result.@F == ()\n"
            "    assert result.count == @K - @K\n"
        ),
        (
            "    for index, @F in enumerate(@M):\n"
            "        if @F is None:\n"
            "            continue\n"
            "        total += len(@F) * @K\n"
            '        logger.debug("@N step %d", index)\n'
        ),
        (
            "import logging\n"
            "import os\n"
            "from pathlib import Path\n"
            "\n"
            "logger = logging.getLogger(__name__)\n"
            "@N_TIMEOUT = @K  # seconds\n"
        ),
        (
            "    try:\n"
            "        data = orjson.loads(raw)\n"
            "    except orjson.JSONDecodeError as exc:\n"
            "        raise @NError(@F) from exc\n"
            "    if not isinstance(data, dict):\n"
            "        return None\n"
        ),
        (
            '@pytest.mark.parametrize(("@F", "expected"), [("", 0), ("a", 1), ("@M", @K)])\n'
            "def test_@N(@F: str, expected: int) -> None:\n"
            "    assert @M(@F) == expected\n"
        ),
        ("    if not @F:\n        return @M.default()\n    return @M.from_@F(@F, retries=@K)\n"),
    ),
    "typescript": (
        (
            "export async function @N(@F: string, opts: { limit?: number } = {}): Promise<@M[]> {\n"
            "  const limit = opts.limit ?? @K;\n"
            "  const rows = await db.query<@M>(`SELECT * FROM @F LIMIT ${limit}`);\n"
            "  return rows.filter((r) => r.@F !== undefined);\n"
            "}\n"
        ),
        ("export interface @N {\n  id: string;\n  @F: number;\n  createdAt: Date;\n  tags?: string[];\n}\n"),
        (
            "const @N = useCallback(\n"
            "  (event: React.ChangeEvent<HTMLInputElement>) => {\n"
            "    set@M(event.target.value);\n"
            "    onChange?.(event.target.value.length > @K);\n"
            "  },\n"
            "  [onChange],\n"
            ");\n"
        ),
        (
            "describe('@N', () => {\n"
            "  it('returns @F for valid input', async () => {\n"
            "    const result = await @M('@F');\n"
            "    expect(result).toHaveLength(@K);\n"
            "  });\n"
            "});\n"
        ),
        (
            "import { readFile } from 'node:fs/promises';\n"
            "import path from 'node:path';\n"
            "import type { @M } from './types.js';\n"
        ),
        (
            "  switch (action.type) {\n"
            "    case '@F/loaded':\n"
            "      return { ...state, @F: action.payload, loading: false };\n"
            "    case '@F/failed':\n"
            "      return { ...state, error: action.error };\n"
            "    default:\n"
            "      return state;\n"
            "  }\n"
        ),
        (
            "export class @N extends EventEmitter {\n"
            "  private readonly @F = new Map<string, @M>();\n"
            "\n"
            "  get size(): number {\n"
            "    return this.@F.size;\n"
            "  }\n"
            "}\n"
        ),
    ),
    "go": (
        (
            "func (s *@N) @M(ctx context.Context, @F string) ([]byte, error) {\n"
            "\tctx, cancel := context.WithTimeout(ctx, @K*time.Second)\n"
            "\tdefer cancel()\n"
            "\tdata, err := s.store.Get(ctx, @F)\n"
            "\tif err != nil {\n"
            '\t\treturn nil, fmt.Errorf("@M %s: %w", @F, err)\n'
            "\t}\n"
            "\treturn data, nil\n"
            "}\n"
        ),
        (
            "type @N struct {\n"
            '\t@M  string `json:"@F"`\n'
            '\tCount int    `json:"count"`\n'
            "\tmu    sync.Mutex\n"
            "}\n"
        ),
        (
            "func Test@N(t *testing.T) {\n"
            "\tt.Parallel()\n"
            '\tgot, err := @M("@F")\n'
            "\trequire.NoError(t, err)\n"
            "\tassert.Len(t, got, @K)\n"
            "}\n"
        ),
        (
            "\tfor i, @F := range items {\n"
            "\t\tif @F == nil {\n"
            "\t\t\tcontinue\n"
            "\t\t}\n"
            "\t\tresults[i] = @M(@F)\n"
            "\t}\n"
        ),
        (
            "package @F\n"
            "\n"
            "import (\n"
            '\t"context"\n'
            '\t"errors"\n'
            '\t"fmt"\n'
            '\t"time"\n'
            ")\n"
            "\n"
            'var Err@N = errors.New("@F: not found")\n'
        ),
    ),
    "rust": (
        (
            "pub fn @N(@F: &str) -> Result<Vec<@M>, Error> {\n"
            "    let mut out = Vec::with_capacity(@K);\n"
            "    for line in @F.lines() {\n"
            "        out.push(@M::parse(line)?);\n"
            "    }\n"
            "    Ok(out)\n"
            "}\n"
        ),
        (
            "#[derive(Debug, Clone, Serialize, Deserialize)]\n"
            "pub struct @N {\n"
            "    pub @F: String,\n"
            "    pub count: u64,\n"
            "}\n"
        ),
        (
            "impl From<io::Error> for @NError {\n"
            "    fn from(err: io::Error) -> Self {\n"
            "        @NError::Io(err)\n"
            "    }\n"
            "}\n"
        ),
        ('#[test]\nfn @N_roundtrip() {\n    let v = @M::new("@F");\n    assert_eq!(v.len(), @K);\n}\n'),
        (
            "    match self.@F.get(&key) {\n"
            "        Some(v) => Ok(v.clone()),\n"
            "        None => Err(@NError::Missing(key.to_string())),\n"
            "    }\n"
        ),
    ),
    "elixir": (
        (
            "  def @N(%@M{} = @F, opts \\\\ []) do\n"
            "    limit = Keyword.get(opts, :limit, @K)\n"
            "\n"
            "    @F\n"
            "    |> Map.get(:items, [])\n"
            "    |> Enum.take(limit)\n"
            "  end\n"
        ),
        (
            "defmodule @N.@M do\n"
            '  @moduledoc """\n'
            "  Handles @F for the web layer.\n"
            '  """\n'
            "  use Phoenix.LiveView\n"
            "\n"
            "  alias @N.Repo\n"
        ),
        (
            '  test "@N returns @F", %{conn: conn} do\n'
            '    conn = get(conn, ~p"/@F")\n'
            '    assert html_response(conn, 200) =~ "@M"\n'
            "  end\n"
        ),
        (
            '  def handle_event("@F", %{"id" => id}, socket) do\n'
            "    {:noreply, assign(socket, :@F, @M.get!(id))}\n"
            "  end\n"
        ),
    ),
}

EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py",),
    "typescript": (".ts", ".tsx"),
    "go": (".go",),
    "rust": (".rs",),
    "elixir": (".ex", ".exs"),
}

IDENT_PARTS = (
    "session",
    "loader",
    "index",
    "record",
    "parent",
    "chain",
    "token",
    "budget",
    "report",
    "cache",
    "writer",
    "reader",
    "config",
    "parser",
    "render",
    "queue",
    "worker",
    "limit",
    "retry",
    "topology",
    "summary",
    "digest",
    "anchor",
    "branch",
    "leaf",
    "fragment",
    "message",
    "payload",
    "client",
    "store",
)

COMMANDS: dict[str, tuple[str, ...]] = {
    "python": (
        "pytest -x -q",
        "pytest tests/ -k @F -q",
        "ruff check .",
        "mypy --strict src",
        "python -m build",
    ),
    "typescript": ("npm test", "npx vitest run", "npx tsc --noEmit", "npm run lint", "pnpm build"),
    "go": ("go test ./...", "go vet ./...", "go build ./cmd/...", "golangci-lint run"),
    "rust": ("cargo test", "cargo clippy -- -D warnings", "cargo build --release"),
    "elixir": (
        "mix test",
        "mix compile --warnings-as-errors",
        "mix credo --strict",
        "mix format --check-formatted",
    ),
    "any": (
        "git status",
        "git diff --stat",
        "git log --oneline -10",
        "ls -la",
        "git add -A && git commit -m 'wip'",
    ),
}

LOG_LINES = (
    "============================= test session starts ==============================",
    "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0",
    "collected @K items",
    "tests/test_@N.py ....................F...                                    [ 42%]",
    "tests/test_@M.py ..........................................                  [100%]",
    "FAILED tests/test_@N.py::test_@M_handles_empty_@F - AssertionError: assert @K == 0",
    "E       AssertionError: expected @F to be empty",
    'E       assert ["@M"] == []',
    "=================== 1 failed, @K passed, 2 warnings in 3.41s ===================",
    "warning: unused variable `@F`",
    "  --> src/@N.rs:@K:9",
    "   |",
    "@K |     let @F = @M::new();",
    "   |         ^^^^ help: if this is intentional, prefix it with an underscore: `_@F`",
    "Compiling @N v0.@K.0 (/home/dev/projects/@N)",
    "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 12.@Ks",
    "ok  \tgithub.com/acme/@N/internal/@M\t0.@Ks",
    "--- FAIL: Test@N (0.00s)",
    "    @M_test.go:@K: expected @F, got <nil>",
    "> @N@0.@K.0 test",
    " ✓ src/@M.test.ts (@K tests) 41ms",
    " ✗ src/@N.test.ts > @M > returns @F for valid input",
    "   → expected [] to have a length of @K but got +0",
    "npm WARN deprecated @F@1.@K.0: This package is no longer supported.",
    "On branch main",
    "Changes not staged for commit:",
    "\tmodified:   src/@N/@M.py",
    " src/@N/@M.py | @K ++++++----",
    "a1b2c3d Fix @F handling in @M",
    "-rw-r--r--  1 dev dev  @K Feb 12 16:02 @M.py",
    "Compiling @K files (.ex)",
    'warning: variable "@F" is unused (if the variable is not meant to be used, prefix it with an '
    "underscore)",
    "  lib/@N/@M.ex:@K: @N.@M.handle_event/3",
    "Finished in 2.@K seconds (0.5s async, 1.9s sync)",
    "@K tests, 0 failures",
    "[info] GET /@F",
    "[debug] Processing with @N.@MLive.mount/3",
    "2026-02-12T16:03:36.558Z INFO  @N::@M > processed @K records in 0.@Ks",
    "Traceback (most recent call last):",
    '  File "/home/dev/projects/@N/src/@M.py", line @K, in @F',
    "KeyError: '@F'",
)

ASSISTANT_EN = (
    "Let me look at how @N is wired into @M before changing anything.",
    "I'll check the existing tests for @F first.",
    "The failure comes from @M returning an empty list when @F is missing.",
    "That explains the flaky behaviour: the cache key ignores @F.",
    "Now I'll update `@N` to handle the empty case explicitly.",
    "All @K tests pass now, and the linter is clean.",
    "Let me run the test suite to confirm the fix.",
    "I found the problem in `@M`: the loop exits before the last @F is flushed.",
    "Here's a summary of the changes:",
    "- `@N` now validates @F before writing.",
    "- Added a regression test covering the empty @F case.",
    "- Removed the unused `@M` helper.",
    "The root cause is a race between the writer and the @F watcher.",
    "I'll read the configuration loader to see where the default comes from.",
    "This should be a small change; the rest of the module already follows the pattern.",
    "Good, the build succeeds. One warning remains about an unused variable in `@M`; I'll fix it too.",
    "Let me search for other callers of `@N` so nothing else breaks.",
    "The parallel reads confirm that @F is only set in one place.",
)

THINKING_EN = (
    "The user wants @F handled in @N.",
    "I should check whether @M is called from the CLI as well as the tests.",
    "If the index is rebuilt on every call this will be slow for large sessions.",
    "Maybe the simplest fix is to pass @F explicitly instead of reading it from the environment.",
    "The test asserts @K items, so the off-by-one is in the slicing, not the parser.",
    "Let me think about the ordering: parents must be written before children.",
    "I need to be careful not to change the public API of @M.",
    "There are two code paths; only the async one drops the last @F.",
)

PROMPTS_EN = (
    "The tests in @M are failing after the last refactor, can you take a look?",
    "Add a --@F flag to the CLI that limits how many @N entries are processed.",
    "Why does @N take so long on large inputs? Profile it and make it faster.",
    "Refactor @M so the parsing and the I/O are separated, keep behaviour identical.",
    "Can you write tests for @N? Cover the empty and the malformed @F cases.",
    "mix phx.server doesnt seem to start",
    "Fix the type errors mypy reports in @M.",
    "Work on issue @K: @F is lost when the session is resumed.",
    "ok, commit this and push",
    "Explain how @N decides which @F to keep.",
    "Please update the README with the new @F option and an example.",
    "The CI build is red on main, find out why and fix it.",
    "continue",
    "Looks good. Now do the same for @M.",
)

FOREIGN_PROMPTS: dict[str, tuple[str, ...]] = {
    "zh": (
        "请帮我修复 @N 里的测试失败问题。",
        "这个函数在处理空的 @F 时会崩溃，能看一下吗？",
        "请把 @F 参数加到命令行工具里，并写一个例子。",
        "为什么 @N 在大文件上这么慢？",
        "继续",
    ),
    "ja": (
        "@N のテストが失敗しています。原因を調べてもらえますか？",
        "@F が空のときに例外が発生します。",
        "READMEに @F オプションの説明を追加してください。",
        "@M をリファクタリングして、動作は変えないでください。",
    ),
    "ru": (
        "Тесты в @M падают после последнего рефакторинга, посмотри, пожалуйста.",
        "Добавь флаг --@F в CLI и напиши пример использования.",
        "Почему @N так медленно работает на больших файлах?",
        "Исправь ошибки типов в @M.",
    ),
    "ar": (
        "الاختبارات في @M تفشل بعد آخر تعديل، هل يمكنك التحقق؟",
        "أضف خيار --@F إلى أداة سطر الأوامر مع مثال.",
        "لماذا يعمل @N ببطء على الملفات الكبيرة؟",
    ),
}

FOREIGN_REPLIES: dict[str, tuple[str, ...]] = {
    "zh": (
        "我已经检查了 @M 的实现，问题出在缓存键上。",
        "所有测试都通过了，代码风格检查也没有问题。",
        "我先看一下 @N 是怎么调用 @M 的。",
        "已经在 @N 中加入了对空 @F 的处理，并补充了回归测试。",
        "接下来运行测试确认修复。",
    ),
    "ja": (
        "@M の実装を確認しました。キャッシュのキーに問題があります。",
        "すべてのテストが通りました。リンターも問題ありません。",
        "このリファクタリングで動作は変わらないはずです。",
        "まず @N が @F をどのように扱っているか確認します。",
        "回帰テストを追加しました。",
    ),
    "ru": (
        "Проблема в том, что @N не обрабатывает пустой @F.",
        "Все тесты проходят, линтер не выдаёт предупреждений.",
        "Я проверил реализацию @M, ошибка в ключе кэша.",
        "Сначала посмотрю, как @N вызывает @M.",
        "Добавил регрессионный тест для пустого @F.",
    ),
    "ar": (
        "المشكلة أن @N لا يعالج الحالة الفارغة لـ @F.",
        "جميع الاختبارات ناجحة الآن.",
        "سأتحقق أولاً من طريقة استدعاء @M داخل @N.",
        "أضفت اختبار انحدار للحالة الفارغة.",
    ),
}

SUBAGENT_PROMPTS = (
    "Explore the codebase to understand how @N is implemented. I need to know which modules call @M and how "
    "@F flows through them. Report file paths and function names; do not modify anything.",
    "Read and summarize the following files for implementing the @F option. Focus on public functions, their "
    "callers and any tests that exercise them.",
    "Search for all usages of @N and report file paths with line numbers, grouped by module.",
    "Analyze the current test suite for @M: which cases are covered, which are missing, and how fixtures "
    "are built.",
    "Give me a comprehensive overview of the code organization: entry points, the @N layer and the @M "
    "adapters.",
)

EMOJI = ("🎉", "✅", "🚀", "🐛", "👍", "🔥", "🤔", "⚠️", "📦", "✨")

SLUG_WORDS = (
    "radiant",
    "floating",
    "music",
    "lexical",
    "painting",
    "whisper",
    "linked",
    "soaring",
    "matsumoto",
    "zippy",
    "wondering",
    "wadler",
    "wiggly",
    "hugging",
    "lynx",
    "quiet",
    "amber",
    "harbor",
    "gentle",
    "turing",
    "cobalt",
    "meadow",
    "spinning",
    "hopper",
    "brisk",
    "lovelace",
    "velvet",
    "orbit",
)

PROJECT_NAMES = (
    "spotter",
    "ledger-api",
    "pixel-forge",
    "infra-live",
    "mobile-shell",
    "data-pipeline",
    "docs-site",
    "billing-service",
    "ml-experiments",
    "devtools-cli",
    "chat-server",
    "search-indexer",
    "auth-gateway",
    "web-storefront",
    "metrics-agent",
    "game-tools",
    "notebook-sync",
    "edge-proxy",
)

PROJECT_ROOTS = ("/home/dev/projects", "/Users/dev/work", "/home/dev/src", "/Users/dev/code/clients")
