"""The checks that keep the README and the docs from breaking, each returning its findings as `file:line: what`
(tests/test_docs.py runs them on the real files and on planted broken ones).

- `unclosed_fences`: every code fence closes, and every opening fence names its language: a stray ``` then opens a
  block instead of closing one, which is how a merge once turned half of the README into one code block.
- `bad_commands`: every `hallubench ...` command shown parses with the `hallubench` command's own argparse parsers
  (cli/main.py), without running it: whole in bash/console blocks; in inline code, which may name a command
  without its required arguments (`hallubench view`), its command, flags and choices.
- `placeholders_read_as_html`: a `<name>` placeholder outside code (`qacc_<j>`, "Is there a <object>") is raw HTML
  to a markdown renderer, which drops it: it belongs in backticks, or written `&lt;name&gt;`.
- `broken_links`: every relative link of a markdown file outside the site (the README) names a file that exists
  and, for a markdown target, a heading that exists (the site's own links are `mkdocs build --strict`'s job).
"""
from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)")
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
OPERATORS = {"&&", "||", ";", "|", "&"}
PLACEHOLDER = "..."  # "hallubench run ... --helper X": the elided flags; the rest must still parse


def markdown_files() -> list[Path]:
    """Every markdown file a reader or the Hub renders: README, ARCHITECTURE, docs/ (incoming notes included),
    the metric and dataset cards, the tests' READMEs."""
    patterns = ["README.md", "ARCHITECTURE.md", "docs/**/*.md", "metrics/*/README.md", "builders/cards/*.md",
                "tests/**/README.md"]
    return sorted({path for pattern in patterns for path in ROOT.glob(pattern)})


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}"


def code_blocks(text: str):
    """(info string, first line number, lines) of each fenced block; an unclosed one runs to the end."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, start, body = opening["fence"], i + 1, []
        i += 1
        while i < len(lines) and not re.match(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}[ \t]*$", lines[i]):
            body.append(lines[i])
            i += 1
        yield opening["info"], start, body, i < len(lines)
        i += 1


def unclosed_fences(path: Path) -> list[str]:
    problems = []
    for info, start, _body, closed in code_blocks(path.read_text(encoding="utf-8")):
        if not closed:
            problems.append(f"{where(path, start)}: this code fence is never closed")
        elif not info:
            problems.append(f"{where(path, start)}: an opening fence without a language (```bash, ```text, ...): "
                            "if it was meant to close a block, the block above was closed already")
    return problems


def shown_commands(path: Path) -> list[tuple[int, str]]:
    """(line, command line, whole) of each `hallubench` command shown: in shell blocks (continuation lines joined;
    whole commands) and in inline code outside blocks (parts of one)."""
    text = path.read_text(encoding="utf-8")
    found, in_blocks = [], set()
    for info, start, body, _closed in code_blocks(text):
        in_blocks.update(range(start, start + len(body) + 2))
        if info not in SHELL_LANGUAGES:
            continue
        joined, first = "", None
        for offset, line in enumerate(body, start=1):
            first = first or start + offset
            if line.rstrip().endswith("\\"):
                joined += line.rstrip()[:-1] + " "
                continue
            found.append((first, joined + line, True))
            joined, first = "", None
    for number, line in enumerate(text.splitlines(), start=1):
        if number not in in_blocks:
            found += [(number, span, False) for span in re.findall(r"`(hallubench [^`]+)`", line)]
    return [shown for shown in found if "hallubench" in shown[1]]


def invocations(command: str) -> list[tuple[list[str], list[str]]]:
    """(what comes before `hallubench`, its arguments) of each hallubench invocation in one shell line
    (`hallubench ...`, `python -m hallubench ...`, `accelerate launch ... -m hallubench ...`), comments left out."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words, found = [], []
    for token in [*lexer, ";"]:
        if token not in OPERATORS:
            words.append(token)
            continue
        if "hallubench" in words:
            at = words.index("hallubench")
            found.append((words[:at], words[at + 1:]))
        words = []
    return found


def hallubench_arguments(command: str) -> list[list[str]]:
    """The argument lists of the hallubench invocations in one shell line (launchers and environment left out)."""
    return [arguments for _before, arguments in invocations(command)]


def parse_error(arguments: list[str], whole: bool = True) -> str | None:
    """What the hallubench parser says about `arguments` (None: they parse); --help and --version are fine.
    Missing required arguments are fine in a part of a command (`whole=False`) or one with `...` elided; a choice
    only a plug-in can add (`--model my_adapter`) is fine when the command loads plug-ins (`--include`)."""
    from hallubench.cli.main import COMMANDS, build_parser

    elided = PLACEHOLDER in arguments
    arguments = [argument for argument in arguments if argument != PLACEHOLDER]
    command = next((argument for argument in arguments if not argument.startswith("-")), "")
    if command.isupper():  # `hallubench COMMAND --help`: a placeholder for any command
        return None
    parser = build_parser(command if command in COMMANDS else "")
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            args, unknown = parser.parse_known_args(arguments)
    except SystemExit as stop:
        message = said.getvalue().strip().splitlines()[-1:] or [""]
        if stop.code == 0 or ((elided or not whole) and re.search(r"(arguments are|is) required", message[0])):
            return None
        if "invalid choice" in message[0] and any(a.startswith(("--include", "--include_path")) for a in arguments):
            return None
        return message[0]
    if unknown:
        return f"unrecognized arguments: {' '.join(unknown)}"
    if not getattr(args, "func", None):
        return "no command (hallubench COMMAND ...)"
    return None


def bad_commands(path: Path) -> list[str]:
    problems = []
    for line, command, whole in shown_commands(path):
        for arguments in hallubench_arguments(command):
            error = parse_error(arguments, whole)
            if error:
                problems.append(f"{where(path, line)}: `hallubench {shlex.join(arguments)}`: {error}")
    return problems


def slug(heading: str) -> str:
    """Python-Markdown's toc anchor of a heading (its default slugify), as GitHub makes them for plain headings."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    fenced = {n for _info, start, body, _c in code_blocks(text) for n in range(start, start + len(body) + 2)}
    headings = {slug(m[1]) for n, line in enumerate(text.splitlines(), start=1)
                if n not in fenced and (m := re.match(r"^#{1,6}\s+(.*?)\s*#*$", line))}
    return headings | set(re.findall(r'<a id="([^"]+)"></a>', text))  # a generated table's row anchors


HTML_WE_WRITE = {"a", "br", "details", "summary", "sup", "sub", "kbd", "b", "i", "em", "strong", "p", "div", "span"}


def placeholders_read_as_html(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for _info, start, body, _closed in code_blocks(text):  # blank the blocks, keeping the line numbers
        for n in range(start - 1, min(start + len(body) + 1, len(lines))):
            lines[n] = ""
    prose = re.sub(r"(`+)(.+?)\1", lambda m: "\n" * m[0].count("\n"), "\n".join(lines), flags=re.S)
    return [f"{where(path, prose.count(chr(10), 0, m.start()) + 1)}: {m[0]} outside code is read as an HTML tag "
            "and disappears: put it in backticks or write &lt;...&gt;"
            for m in re.finditer(r"<([a-z_][a-z0-9_-]*)>", prose) if m[1] not in HTML_WE_WRITE]


def broken_links(path: Path) -> list[str]:
    problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check offline
                continue
            file, _, anchor = target.partition("#")
            resolved = (path.parent / file).resolve() if file else path
            if not resolved.exists():
                problems.append(f"{where(path, number)}: link to {target}: no such file")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                problems.append(f"{where(path, number)}: link to {target}: {file or path.name} has no heading "
                                f"#{anchor}")
    return problems

