"""hallubench.markup: a name we did not write stays text in markdown and HTML."""
import sys
import unicodedata

import pytest

from hallubench.markup import escape_html, escape_markdown, escape_page_controls, escape_terminal, markdown_code

EVERY_CHARACTER = "".join(map(chr, range(sys.maxunicode + 1)))

HOSTILE = ["<script>alert(1)</script>", "a | b", "x\n# heading\n| c | d |", "# h", "1. item", "- item", "[l](http://x)",
           "**bold**", "`tick`", "<img src=x onerror=alert(1)>", "a\r\nb\u2028c"]


@pytest.mark.parametrize("text", HOSTILE)
def test_escape_markdown_keeps_one_line_of_text(text):
    out = escape_markdown(text)
    assert "\n" not in out and "\r" not in out and "\u2028" not in out
    assert "<" not in out and ">" not in out
    assert "|" not in out.replace("\\|", "")
    assert not out.startswith(("#", "-", "+")) and not out[:2].rstrip("\\").endswith(".")
    for special in "[]()*`":
        assert special not in out.replace("\\" + special, "")


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_code_cannot_be_closed_early(text):
    out = markdown_code(text)
    fence = out[: len(out) - len(out.lstrip("`"))]
    assert out.endswith(fence) and fence not in out[len(fence): -len(fence)]
    assert "\n" not in out and "|" not in out.replace("\\|", "")


def test_plain_names_stay_readable():
    assert escape_markdown("Qwen/Qwen2.5-VL-7B-Instruct") == "Qwen/Qwen2.5-VL-7B-Instruct"
    assert escape_html('a"b<c>&') == "a&quot;b&lt;c&gt;&amp;"


def test_a_terminal_line_carries_no_character_python_does_not_print():
    """Over every code point: the line is printable (no control, line break, bidi or other format character) and
    each character is either kept as it is or shown as the escape a Python literal would use."""
    line = escape_terminal(EVERY_CHARACTER)
    assert line.isprintable()
    for char in ("\x1b", "\n", "\r", "\t", "\x00", "\x9b", "\u202e", "\u200d", "\u2028", "\xa0", "\ud800"):
        assert escape_terminal(f"a{char}b") == "a" + ascii(char)[1:-1] + "b"
    assert escape_terminal("é ✓ 漢字 \\ <b>") == "é ✓ 漢字 \\ <b>"  # printable text is left as it is


def test_a_page_shows_control_characters_as_escapes_and_keeps_lines_and_format_characters():
    """Over every code point: a character changes exactly when it is a control character (category Cc) other than
    newline and tab, and then to its Python escape; emoji joiners and bidi marks (category Cf) stay."""
    for char in EVERY_CHARACTER[:0x3000]:
        hidden = unicodedata.category(char) == "Cc" and char not in "\n\t"
        assert escape_page_controls(char) == (ascii(char)[1:-1] if hidden else char)
    page = escape_page_controls(EVERY_CHARACTER)
    assert not [char for char in page if unicodedata.category(char) == "Cc" and char not in "\n\t"]
    assert escape_page_controls("line one\n\tline two\x07\u200d\u202e") == "line one\n\tline two\\x07\u200d\u202e"
