"""A record file whose last line was cut anywhere (kill -9 or a full disk mid-write), at every byte of a record
in non-ASCII text, inside a multi-byte UTF-8 character too: the cut line is dropped and its sample redone, and
the store ends up as if nothing had happened; damage anywhere else is a named file:line error."""
import json

import pytest

from hallubench.errors import CorruptRecordError
from hallubench.harness import store

# Two-, three- and four-byte UTF-8 characters, so cuts fall inside each kind.
TEXT = "Un chat noir é, 黑猫 🐈 sur le toit"


def _record(key, text):
    return {"key": key, "task": "t", "id": key, "outputs": [text], "samples": [text[::-1]], "error": None}


def _line(record):
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


def test_a_last_line_cut_at_any_byte_is_dropped_and_redone(tmp_path):
    first, last = _record("a", TEXT), _record("b", TEXT + " ß")
    whole = _line(first) + _line(last)
    cut_inside_a_character = 0
    for cut in range(len(_line(first)), len(whole) - 1):  # every length of the last line but the whole one
        folder = tmp_path / str(cut)
        folder.mkdir()
        path = store.rank_file(folder, 0)
        path.write_bytes(whole[:cut])
        try:
            whole[len(_line(first)):cut].decode()
        except UnicodeDecodeError:
            cut_inside_a_character += 1
        contents = store.read_store(folder)
        assert list(contents.records) == ["a"], cut
        assert contents.torn == ([str(path)] if cut > len(_line(first)) else []), cut
        writer = store.SampleWriter(path)  # the rerun: trims the torn tail, then appends the redone sample
        writer.append(last)
        writer.close()
        assert path.read_bytes() == whole, cut
        merged = store.merge(folder)
        assert merged.records == {"a": first, "b": last} and not list(folder.glob(".*tmp*")), cut
    assert cut_inside_a_character > 10  # the cuts really fell inside multi-byte characters


def test_a_whole_last_record_without_its_newline_counts_as_done(tmp_path):
    path = store.rank_file(tmp_path, 0)
    path.write_bytes(_line(_record("a", TEXT)) + _line(_record("b", TEXT))[:-1])
    assert list(store.read_store(tmp_path).records) == ["a", "b"]
    store.SampleWriter(path).close()
    assert path.read_bytes().endswith(b"}\n")


@pytest.mark.parametrize("damage", [b"\xff\xfe not utf-8\n", b'{"key": "x", "task"\n', b"[1, 2]\n"])
def test_damage_before_the_last_line_is_a_named_file_and_line_error(tmp_path, damage):
    path = store.rank_file(tmp_path, 0)
    path.write_bytes(_line(_record("a", TEXT)) + damage + _line(_record("b", TEXT)))
    with pytest.raises(CorruptRecordError, match=rf"{path}:2: not a"):
        store.read_store(tmp_path)
