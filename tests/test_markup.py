"""hallubench.markup: a name we did not write stays text in markdown and HTML."""
import pytest

from hallubench.markup import escape_html, escape_markdown, markdown_code

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
