"""`compaction report DIR` and `--html`, rendered by a real headless Chromium: the page renders, every
figure it copies from summary.json (or tokens.json) equals the file's, the figures it sums from the
session reports equal the reports' own, every session links to its report, nothing is fetched, and
a screenshot is kept under the test's tmp directory."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from pipeline.testing.invoke import compaction, reports

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# Two Claude Code sessions and one Codex rollout of the corpus that compress compacts: the resume
# gate proves all three (15 s), enough for verdicts and probe recall from both judges.
GATED = (
    "files/jnarowski__agentcmd__packages_agent-cli-sdk_tests_fixtures_claude_full_full-session.jsonl",
    "files/jnarowski__agentcmd__packages_agent-cli-sdk_tests_fixtures_claude_full_full-session-two.jsonl",
    "codex/files/EdofEngland__code_butler__.codex_sessions_2025_11_24_rollout-2025-11-24T13-38-49-"
    "019ab760-3d78-7fd0-9ea1-4c39e889b87b.jsonl",
)


class Dom(HTMLParser):
    """What a test reads of a dumped DOM: the figures with their source, links, element names."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[tuple[dict[str, str], str]] = []
        self.links: list[str] = []
        self.tags: Counter[str] = Counter()
        self._open: dict[str, str] | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        values = {name: value or "" for name, value in attrs}
        if tag == "a" and "href" in values:
            self.links.append(values["href"])
        if tag == "span" and "data-source" in values:
            self._open, self._text = values, ""

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self._open is not None:
            self.figures.append((self._open, self._text))
            self._open = None


def _shown(text: str) -> float | None:
    return None if text == "-" else float(text.replace(",", ""))


def _at(document: Any, keys: list[str]) -> Any:
    for key in keys:
        document = document[key]
    return document


def _check_copied(dom: Dom, source: str, document: Any) -> set[tuple[str, ...]]:
    """Every figure the page copied from `source` equals the document's; the key paths checked."""
    checked = set()
    for attrs, text in dom.figures:
        if attrs["data-source"] != source or "data-path" not in attrs:
            continue
        keys = json.loads(attrs["data-path"])
        expected = _at(document, keys)
        shown = _shown(text)
        assert shown == (None if expected is None else pytest.approx(round(expected, 4))), (keys, text)
        checked.add(tuple(keys))
    return checked


def _derived(dom: Dom, kind: str) -> dict[str, float | None]:
    return {
        json.loads(attrs["data-derived"])[1]: _shown(text)
        for attrs, text in dom.figures
        if "data-derived" in attrs and json.loads(attrs["data-derived"])[0] == kind
    }


@pytest.fixture(scope="session")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Debian's chromium is not installed: run scripts/install-chromium (needs root and apt)")
    return found


def _chromium(chromium: str, work: Path) -> list[str]:
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    return [*base, f"--user-data-dir={work / 'chromium-profile'}", "--window-size=1200,2400"]


def render(chromium: str, page: Path, work: Path) -> Dom:
    """The page as headless Chromium renders it: its DOM, parsed."""
    dumped = subprocess.run(
        [*_chromium(chromium, work), "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    dom = Dom()
    dom.feed(dumped.stdout)
    return dom


def screenshot(chromium: str, page: Path, work: Path) -> Path:
    """A screenshot of the page's top 1200x2400 px, kept in `work` (about 260 KB; the whole page of
    a 64-session run would be over 1 MB)."""
    shot = work / f"{page.parent.name}.png"
    subprocess.run(
        [*_chromium(chromium, work), f"--screenshot={shot}", page.as_uri()],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    assert shot.read_bytes()[:8] == PNG_MAGIC, "Chromium wrote no screenshot"
    return shot


def _self_contained(page: Path) -> None:
    text = page.read_text()
    for outside in ("<script", "<link", "<img", "<iframe", "http://", "https://", "@import", "url("):
        assert outside not in text, f"the page reaches outside itself: {outside}"


@pytest.fixture(scope="module")
def validated(corpus_files: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`validate --html` over the shared corpus."""
    out = tmp_path_factory.mktemp("validated") / "reports"
    done = compaction("validate", str(corpus_files), "--report-dir", str(out), "--jobs", "2", "--html")
    assert done.returncode == 1, done.stderr  # the corpus holds sessions that are refused
    assert f"HTML report: {out / 'report.html'}" in done.stdout
    return out


@pytest.fixture(scope="module")
def validated_page(
    validated: Path, chromium: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Dom, Path]:
    """The corpus run's page as Chromium renders it, and its screenshot (kept with the test's tmp)."""
    work = tmp_path_factory.mktemp("rendered")
    page = validated / "report.html"
    return render(chromium, page, work), screenshot(chromium, page, work)


def test_the_corpus_run_renders_and_its_numbers_are_summary_json_s(
    validated: Path, validated_page: tuple[Dom, Path]
) -> None:
    _self_contained(validated / "report.html")
    dom, shot = validated_page
    summary = json.loads((validated / "summary.json").read_text())
    checked = _check_copied(dom, "summary.json", summary)
    expected = {
        ("sessions",),
        ("failed",),
        ("bytes",),
        ("totals", "all", "tokens", "seed", "need_compaction"),
    }
    expected |= {("by_status", status) for status in summary["by_status"]}
    expected |= {("totals", "by_format", fmt, "sessions") for fmt in summary["totals"]["by_format"]}
    assert expected <= checked
    assert dom.tags["svg"] >= 1 and dom.tags["table"] >= 5
    print(f"screenshot: {shot}")


def test_the_corpus_compacted_shows_tokens_and_savings_against_the_target(
    corpus_files: Path, chromium: str, tmp_path: Path
) -> None:
    """`compress --out --html` over the whole corpus (no gate): resume tokens before, after and the
    target, and bytes saved, per agent and root, each figure equal to summary.json's."""
    out = tmp_path / "compacted"
    done = compaction(
        "compress",
        str(corpus_files),
        "--out",
        str(out),
        "--no-verify-resume",
        "--jobs",
        "2",
        "--quiet",
        "--html",
    )
    assert done.returncode == 1, done.stderr  # the corpus holds sessions that are refused
    dom = render(chromium, out / "report.html", tmp_path)
    print(f"screenshot: {screenshot(chromium, out / 'report.html', tmp_path)}")
    summary = json.loads((out / "summary.json").read_text())
    checked = _check_copied(dom, "summary.json", summary)
    totals = summary["totals"]
    compacted = {fmt for fmt, group in totals["by_format"].items() if group.get("resume_tokens")}
    assert compacted, "the corpus run compacted no session"
    expected = {("by_status", status) for status in summary["by_status"]}
    for fmt in compacted:
        at = ("totals", "by_format", fmt)
        expected |= {(*at, "written"), (*at, "files", "before"), (*at, "files", "after")}
        for estimator in totals["by_format"][fmt]["resume_tokens"]:
            expected |= {(*at, "resume_tokens", estimator, key) for key in ("before", "after")}
    for estimator in totals["all"]["resume_tokens"]:
        at = ("totals", "all", "resume_tokens", estimator)
        expected |= {(*at, key) for key in ("before", "after", "ratio", "target", "target_met")}
    assert expected <= checked
    assert {unquote(href) for href in dom.links} == {entry["report"] for entry in summary["reports"]}


def test_every_session_links_to_its_json_report(validated: Path, validated_page: tuple[Dom, Path]) -> None:
    dom, _ = validated_page
    summary = json.loads((validated / "summary.json").read_text())
    linked = {unquote(href) for href in dom.links}
    assert linked == {entry["report"] for entry in summary["reports"]}
    for href in linked:
        assert json.loads((validated / href).read_text())["schema"] == "session-compaction/session-report/v1"


def test_findings_by_code_and_reasons_are_the_reports_own(validated: Path) -> None:
    dom = Dom()
    dom.feed((validated / "report.html").read_text())
    found: Counter[str] = Counter()
    why: Counter[str] = Counter()
    for report in reports(validated):
        found.update(entry["code"] for entry in report["findings"])
        found.update(report.get("findings_truncated", {}))
        errors = {entry["code"] for entry in report["findings"] if entry["severity"] == "error"}
        why.update(report.get("reasons") or errors)
    assert _derived(dom, "findings") == dict(found)
    assert why and _derived(dom, "reasons") == dict(why)


@pytest.fixture(scope="module")
def gated(
    tmp_path_factory: pytest.TempPathFactory, claude_code: Path, codex: Path, corpus_files: Path
) -> Path:
    """`compress --html` with the resume gate over two Claude Code sessions and a Codex rollout."""
    work = tmp_path_factory.mktemp("gated")
    sources = work / "sessions"
    sources.mkdir()
    for name in GATED:
        shutil.copy(corpus_files.parent / name, sources)
    out = work / "reports"
    done = compaction(
        "compress", str(sources), "--out", str(work / "compacted"), "--report-dir", str(out),
        "--verify-resume", "--jobs", "2", "--quiet", "--html",
        env={"COMPACTION_CLAUDE_CODE": str(claude_code), "COMPACTION_CODEX": str(codex)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def test_resume_verdicts_and_probe_recall_are_the_run_s(gated: Path, chromium: str, tmp_path: Path) -> None:
    dom = render(chromium, gated / "report.html", tmp_path)
    summary = json.loads((gated / "summary.json").read_text())
    checked = _check_copied(dom, "summary.json", summary)
    verdicts = summary["resume_checks"]["by_verdict"]
    assert {("resume_checks", "by_verdict", verdict) for verdict in verdicts} <= checked
    assert {("totals", "all", "resume_tokens", e, "target") for e in ("seed", "codex-approx")} <= checked
    probes: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    for report in reports(gated):
        for name, entry in report.get("fidelity", {}).get("classes", {}).items():
            probes[name] += entry["probes"]
            kept[name] += entry["kept"]
    assert probes, "the gate probed no session"
    recall = {name: (round(kept[name] / n, 4) if n else None) for name, n in probes.items()}
    assert _derived(dom, "recall") == pytest.approx(recall)
    assert _derived(dom, "verdicts") == verdicts


def test_a_token_benchmark_shows_its_billed_slopes(corpus_files: Path, chromium: str, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for name in GATED[:2]:
        shutil.copy(corpus_files.parent / name, sessions)
    out = tmp_path / "bench"
    done = compaction("tokens", str(sessions), "--report-dir", str(out), "--jobs", "2", "--quiet", "--html")
    assert done.returncode == 0, done.stderr
    dom = render(chromium, out / "report.html", tmp_path)
    benchmark = json.loads((out / "summary.json").read_text())
    checked = _check_copied(dom, "summary.json", benchmark)
    assert {("all", "usage", name, "median_slope") for name in benchmark["all"]["usage"]} <= checked
    spread = {keys[-1] for keys in checked if keys[:2] == ("all", "by_family")}
    assert {"median_abs_slope_error", "abs_slope_error_q1", "abs_slope_error_q3"} <= spread
    fitted = sum(len(row.get("usage", {}).get("fits", {})) for row in benchmark["sessions"])
    assert fitted and dom.tags["circle"] == fitted  # one dot per session and estimator
    assert {unquote(href) for href in dom.links} == {
        f"{row['label']}.report.json" for row in benchmark["sessions"]
    }
    # `tokens --out DIR` leaves tokens.json in DIR and the reports under DIR/sessions: the same page.
    shutil.copytree(out, tmp_path / "out" / "sessions")
    shutil.copy(out / "summary.json", tmp_path / "out" / "tokens.json")
    made = compaction("report", str(tmp_path / "out"))
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == str(tmp_path / "out" / "report.html")
    again = Dom()
    again.feed((tmp_path / "out" / "report.html").read_text())
    assert _check_copied(again, "tokens.json", benchmark) == checked
    assert {unquote(href) for href in again.links} == {f"sessions/{unquote(href)}" for href in dom.links}


def test_labels_users_control_are_text_not_markup(corpus_files: Path, tmp_path: Path) -> None:
    root = tmp_path / 'x"><u onclick=alert(1)>root'
    root.mkdir()
    hostile = root / '<img src=x onerror="alert(1)">.jsonl'
    shutil.copy(corpus_files.parent / GATED[0], hostile)
    out = tmp_path / "reports"
    done = compaction("validate", str(root), "--report-dir", str(out), "--jobs", "1", "--quiet", "--html")
    assert done.returncode == 0, done.stderr
    text = (out / "report.html").read_text()
    _self_contained(out / "report.html")
    dom = Dom()
    dom.feed(text)
    assert dom.tags["img"] == 0 and dom.tags["u"] == 0
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;.jsonl" in text


def test_what_is_not_a_report_directory_is_a_usage_error(tmp_path: Path) -> None:
    missing = compaction("report", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "is not a directory" in missing.stderr
    empty = compaction("report", str(tmp_path))
    assert empty.returncode == 2 and "holds no summary.json or tokens.json" in empty.stderr
    (tmp_path / "summary.json").write_text('{"schema": "session-compaction/fleet-summary/v1"}')
    broken = compaction("report", str(tmp_path))
    assert broken.returncode == 2 and "does not read as compaction's" in broken.stderr
    assert "Traceback" not in missing.stderr + empty.stderr + broken.stderr
    assert not (tmp_path / "report.html").exists()


def test_a_missing_session_report_is_listed_and_exits_1(validated: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(validated, copy)
    summary = json.loads((copy / "summary.json").read_text())
    gone = summary["reports"][0]
    (copy / gone["report"]).unlink()
    page = tmp_path / "elsewhere" / "page.html"
    page.parent.mkdir()
    done = compaction("report", str(copy), "--out", str(page))
    assert done.returncode == 1 and "1 session report(s) missing or unreadable" in done.stderr
    dom = Dom()
    dom.feed(page.read_text())
    assert len(dom.links) == len(summary["reports"]) - 1
    assert all((page.parent / unquote(href)).is_file() for href in dom.links)  # relative to the page


def test_html_is_refused_in_place(tmp_path: Path) -> None:
    done = compaction("compress", str(tmp_path), "--in-place", "--html")
    assert done.returncode == 2 and "--html is for runs that write a report directory" in done.stderr


def test_a_page_that_cannot_be_written_fails_a_run_that_succeeded(corpus_files: Path, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    shutil.copy(corpus_files.parent / GATED[0], sessions)
    out = tmp_path / "reports"
    (out / "report.html").mkdir(parents=True)  # where the page goes is taken
    done = compaction("validate", str(sessions), "--report-dir", str(out), "--jobs", "1", "--quiet", "--html")
    assert done.returncode == 1 and "report.html not written" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["sessions"], summary["failed"]) == (1, 0)  # the run itself succeeded
