"""One redaction for every string we record, upload or show (hallubench/redact.py), applied by the writers, not by
each field: the walk below puts a marker credential into every text field of every registered model and judge config
(by the kind each field declares) and hands records holding those configs, nested and under new field names, to every
writer of hallubench/writes.py and harness/atomic.py, the sample store, the upload path and logging; the marker must
be in no byte written. `rank --judge llm --judge-args base_url=http://alice:PW@host/v1` (a case that stored the
password in crosscheck.json) is run end to end."""
import base64
import dataclasses
import json
import logging
import typing

import pytest

from hallubench.config import SECRET, SECRET_ENV, field_kinds
from hallubench.harness import atomic, store
from hallubench.redact import MASK, redact, redact_values
from hallubench.registry import JUDGES, MODELS
from hallubench.writes import redacted_bytes, write_atomically, write_text_atomically

from conftest import answers_run_folder

PASSWORD = "Marker-pw-0451"  # in a URL's userinfo
KEY = "Marker-key-9137"  # a token-like query parameter, a Basic token, a Secret, a SecretEnv variable's value
PIECES = [PASSWORD, KEY, base64.b64encode(f"alice:{PASSWORD}".encode()).decode()]


def marked_value(kind):
    """A value of a field of `kind` that carries the marker credential as that field would."""
    if kind == SECRET_ENV:
        return "HB_MARKER_VARIABLE"  # its value is KEY (set below): the variable a plug-in would send
    if kind == SECRET:
        return KEY
    return (f"http://alice:{PASSWORD}@127.0.0.1:9/v1?api_key={KEY}&sig={KEY}&x=1 Authorization: Basic "
            f"{PIECES[2]} Bearer {KEY}")


def marked_configs():
    """(plug-in, its config built from args holding the marker in every text field) for every registered config."""
    built = []
    for kind, registry in (("model", MODELS), ("judge", JUDGES)):
        for name in sorted(registry):
            config = getattr(registry[name], "config", None)
            if config is None:
                continue
            hints, kinds = typing.get_type_hints(config), field_kinds(config)
            args = {f.name: marked_value(kinds[f.name]) for f in dataclasses.fields(config)
                    if str in (typing.get_args(hints[f.name]) or (hints[f.name],))}
            built.append((f"{kind} {name}", config, args))
    assert len(built) > 5
    return built


def records(monkeypatch):
    """Records as our writers get them: each config's args under known and new field names, nested."""
    monkeypatch.setenv("HB_MARKER_VARIABLE", KEY)
    out = []
    for name, config, args in marked_configs():
        try:
            config.from_args(args, what=name)  # notes its credentials, as every CLI reading of a config does
        except Exception:  # noqa: BLE001  a config whose own checks refuse these values: the args still go below
            pass
        out.append({"plugin": name, "config": {"judge_args": args, "model_args": args},
                    "field_added_next_year": [{"deep": list(args.values())}], "message": f"failed: {args}",
                    "variable": KEY})
    return out


def writers(folder, data):
    """Every way hallubench writes a file, each given `data` (the records) to write."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    markdown = "\n".join(f"| {r['plugin']} | {r['message']} |" for r in data)
    html = "".join(f"<li data-x='{r['message']}'>{r['config']}</li>" for r in data)
    yield "write_atomically", lambda: write_atomically(folder / "a.json", lambda tmp: tmp.write_text(text))
    yield "write_text_atomically", lambda: write_text_atomically(folder / "card.md", markdown)
    yield "write_files", lambda: atomic.write_files(folder / "ranking", {
        "crosscheck.json": lambda tmp: tmp.write_text(text), "leaderboard.md": lambda tmp: tmp.write_text(markdown),
        "sentences.jsonl": lambda tmp: tmp.write_text("".join(json.dumps(r) + "\n" for r in data))}, "ranking")

    def site():
        with atomic.replace_folder(folder / "site") as out:
            (out / "index.html").write_text(html)
            (out / "items.js").write_text(f"const ITEMS = {json.dumps(data)};")
    yield "replace_folder", site

    def samples():
        writer = store.SampleWriter(store.rank_file(folder / "run", 0))
        writer.append_all([{"key": f"k{i}", "task": "t", "id": str(i), "error": None, **r} for i, r in enumerate(data)])
        writer.close()
        return store.merge(folder / "run")
    yield "sample store", samples


def test_a_marker_in_every_field_of_every_plugin_config_reaches_no_written_file(tmp_path, monkeypatch, caplog):
    from hallubench.redact import redact_log_records

    data = records(monkeypatch)
    for name, write in writers(tmp_path, data):
        result = write()
        if isinstance(result, store.StoreContents):  # what the store returns is what the file holds
            assert all(MASK in json.dumps(r) for r in result.records.values()), name
    uploaded = redacted_bytes("crosscheck.json", json.dumps(data).encode())
    redact_log_records()
    logging.getLogger("hallubench.test").warning("calling %s", data)
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert len(written) >= 8
    for path in written:
        content = path.read_bytes()
        if path.suffix in (".json", ".jsonl"):
            for line in content.splitlines() if path.suffix == ".jsonl" else [content]:
                json.loads(line)  # still JSON: no mask cuts through an escape or a quote
        for piece in PIECES:
            assert piece.encode() not in content, f"{piece} in {path}"
    for piece in PIECES:
        assert piece.encode() not in uploaded and piece not in caplog.text


@pytest.mark.parametrize("text", [
    'a "quoted token=abc\\" and \\\\ backslash" http://u:p\\"w@h/ ?key=v\\"x',
    "key=value; password: \"x y\" Bearer \\u00e9",
])
def test_redacted_json_text_stays_json_with_its_structure(text):
    line = json.dumps({"answer": text, "token": text})
    assert json.loads(redact(line)).keys() == {"answer", "token"}
    assert redact(redact(line)) == redact(line)  # idempotent: a merge of redacted lines changes nothing


def test_values_are_masked_where_a_field_names_them_and_text_around_is_kept():
    masked = redact_values({"url": "https://h/x?access_token=abc123&page=2", "hf_token": "abc"})
    assert masked == {"url": f"https://h/x?access_token={MASK}&page=2", "hf_token": MASK}


def test_rank_with_a_password_in_the_judge_url_stores_and_shows_none(tmp_path, capfd, monkeypatch):
    from test_judging import CountingJudgeServer  # the stand-in judge on 127.0.0.1
    import threading

    from hallubench.cli.main import main

    server = CountingJudgeServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("HB_RELIABILITY_KEY", KEY)
    try:
        runs = [answers_run_folder(tmp_path / name, "yes", ["yes", "no"]) for name in ("a", "b")]
        url = server.url.replace("http://", f"http://alice:{PASSWORD}@")
        out = tmp_path / "ranking"
        code = main(["rank", *map(str, runs), "--output-dir", str(out), "--cache", str(tmp_path / "j.sqlite"),
                     "--judge", "llm", "--judge-args", f"adapter=openai,model=judge,base_url={url},"
                     "api_key_env=HB_RELIABILITY_KEY"])
    finally:
        server.shutdown()
        server.server_close()
    captured = capfd.readouterr()
    assert code == 0, captured.err
    crosscheck = (out / "crosscheck.json").read_text()
    assert f"http://{MASK}@127.0.0.1" in crosscheck  # recorded, its credentials masked
    for path in [p for p in tmp_path.rglob("*") if p.is_file()]:
        for piece in PIECES:
            assert piece.encode() not in path.read_bytes(), f"{piece} in {path}"
    for piece in PIECES:
        assert piece not in captured.out + captured.err
