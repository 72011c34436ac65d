"""The models x benchmarks board of `hallubench view RUN_DIR...` (no ranking) and the papers' published tables:
cells against results.json, marks, links to run and Hub pages (a Hub id validated, never a URL from data), names
escaped, published values read from view/published/*.yaml and checked against the papers' text and the authors'
leaderboard files, never mixed into the computed columns."""
import csv
import html
import json
import re

import pytest

from hallubench.cli.main import main
from hallubench.view.published import FOLDER, published_tables, read_table
from view_support import HOSTILE_NAME, write_cmm_run, write_pope_run


@pytest.fixture
def board(tmp_path):
    runs = [write_pope_run(tmp_path / "a", "org/model-a", 0.8125),
            write_pope_run(tmp_path / "b", "/ckpt/local/model-b", 0.5, mini=True, unreadable=12),
            write_pope_run(tmp_path / "c", HOSTILE_NAME, 0.25),
            write_pope_run(tmp_path / "d", "https://evil.example/x", 0.125),
            write_cmm_run(tmp_path / "cmm")]
    site = tmp_path / "site"
    assert main(["view", *map(str, runs), "--out", str(site)]) == 0
    return runs, site, (site / "index.html").read_text()


def _matrix(page: str) -> str:
    return page[page.index('<table class="matrix'):page.index("</table>", page.index('<table class="matrix'))]


def test_one_row_per_model_one_column_per_score_with_its_interval(board):
    runs, site, page = board
    matrix = _matrix(page)
    heads = re.findall(r'<th data-type="number" data-col="\d+" data-task="([^"]*)" data-group="\d"( class="extra" hidden)?>'
                       r'<button><span class="metric-name">([^<]*)', matrix)
    # grouped by task, each headline (the metric's first declared score) shown, the rest one click away; yes_ratio
    # has no direction
    assert heads == [("cmm", "", "pa"), ("cmm", " class=\"extra\" hidden", "hr"), ("pope", "", "accuracy"),
                     ("pope", " class=\"extra\" hidden", "precision"), ("pope", " class=\"extra\" hidden", "recall"),
                     ("pope", " class=\"extra\" hidden", "f1")]
    assert re.findall(r'<th class="group-head"[^>]*>(\w+) <button[^>]*>\+ (\d) more', matrix) == [("cmm", "1"), ("pope", "3")]
    rows = re.findall(r'<tr data-model="([^"]*)" class="ours">(.*?)</tr>', matrix, re.S)
    assert [html.unescape(m) for m, _ in rows] == ["org/model-a", "model-b", HOSTILE_NAME, "x", "org/model"]
    for (_, cells), run in zip(rows, runs[:4]):
        metrics = json.loads((run / "results.json").read_text())["tasks"]["pope"]["metrics"]
        accuracy = re.findall(r'<td class="cell[^"]*" data-group="\d"[^>]*data-sort="([^"]*)"[^>]*>(.*?)</td>', cells, re.S)[2]
        assert float(accuracy[0]) == metrics["accuracy"]
        assert f"{metrics['accuracy']:.3f}</span></a> <span class=\"ci-text\">± {1.96 * metrics['accuracy_stderr']:.3f}" \
            in accuracy[1]
        assert re.search(r'href="runs/\d\.html"', accuracy[1])
    b_cells = rows[1][1]
    assert "MINI" in b_cells and "⚠" in b_cells and "SUBSET" not in b_cells
    assert "SUBSET" in rows[4][1] and "MINI" in rows[4][1]  # the cmm run: --limit 5 of 8, mini data
    assert "SUBSET" not in rows[0][1] and "MINI" not in rows[0][1] and "⚠" not in rows[0][1]


def test_links_resolve_and_only_a_hub_id_links_to_the_hub(board):
    _, site, page = board
    for page_path in [site / "index.html", site / "published.html", *sorted((site / "runs").glob("*.html"))]:
        text = page_path.read_text()
        for href in re.findall(r'href="([^"#]+)', text):
            if href.startswith("https://"):
                continue
            assert (page_path.parent / html.unescape(href)).resolve().is_file(), (page_path, href)
    anchors = set(re.findall(r'id="([^"]+)"', page))
    assert {a for a in re.findall(r'href="index.html#([^"]+)"', page)} <= anchors  # no dead anchor (no ranking here)
    hub = re.findall(r'href="(https://[^"]*)"', page)
    assert hub == ["https://huggingface.co/org/model-a", "https://huggingface.co/org/model"]  # not the URL, path, name
    assert "dog</script>" not in page and "<b>" not in page and "dog&lt;/script&gt;&lt;b&gt;" in page


def test_published_tables_have_their_own_page_with_source_and_unit_once(board):
    _, site, page = board
    assert 'class="published-row"' not in page and 'href="published.html"' in page  # linked, not on the index
    published = (site / "published.html").read_text()
    cmm = published[published.index('id="published-cmm_table2"'):]
    cmm = cmm[:cmm.index("</section>")]
    assert "Leng et al. 2024, Table 2(a)" in cmm and cmm.count("Comparable to ours?") == 1 and cmm.count("Unit:") == 1
    assert cmm.count('class="published-row"') == 6 and "mark-published" not in cmm  # no badge per row
    ours = re.search(r'<tr data-model="org/model" class="ours">(.*?)</tr>', cmm, re.S).group(1)
    values = re.findall(r'<span class="value">([^<]*)</span>', ours)
    assert values[-2:] == ["33.3", "0.0"]  # our overall pa and hr on the paper's percent scale
    assert "this site" in ours and "MINI" in ours


def test_every_published_file_names_its_source_and_has_a_value_per_column():
    tables = published_tables()
    assert {t.name for t in tables} == {p.stem for p in FOLDER.glob("*.yaml")} and tables
    for table in tables:
        assert all(table.source[key] for key in ("paper", "cite", "table", "page")) and table.unit and table.comparable
        assert all(len(values) == len(table.columns) for _, values in table.rows)
        for column in table.columns:
            assert column["higher_is_better"] in (True, False, None) and column["label"]


def test_a_bad_published_file_is_refused_naming_it(tmp_path):
    from hallubench.errors import ConfigError

    bad = tmp_path / "bad.yaml"
    bad.write_text("source: {paper: p, cite: c, table: t, page: 1}\nbenchmark: x\nunit: u\ncomparable: c\n"
                   "columns: [{key: a, label: a, higher_is_better: true}]\nrows: [[m, 1, 2]]\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: row 1 \(m\) has 2 values for 1 columns"):
        read_table(bad)


def test_cmm_table_2_is_the_papers_text(shared_data):
    """Each row of cmm_table2.yaml is, value for value, a row of Table 2(a) in the paper's full text."""
    text = (shared_data.parent / "papers" / "cmm_curse_of_multimodalities.txt").read_text()
    part = text[:text.index("(a) Visual-Audio-Language LMMs results.")]
    printed = {}
    for row in re.findall(r"<tr>(.*?)</tr>", part, re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        if len(cells) == 15:
            printed[cells[0]] = [float(c) for c in cells[1:]]
    table = read_table(FOLDER / "cmm_table2.yaml")
    assert len(table.rows) == 6
    for model, values in table.rows:
        assert printed[model] == values


@pytest.mark.parametrize("name,source", [("mhalubench_leaderboard", "img2img-hallucination.csv"),
                                         ("avhallubench_visual_leaderboard", "avhallu-visual.csv"),
                                         ("avhallubench_audio_leaderboard", "avhallu-audio.csv")])
def test_leaderboard_tables_are_the_authors_files(shared_data, name, source):
    table = read_table(FOLDER / f"{name}.yaml")
    rows = list(csv.reader(open(shared_data / "leaderboard" / source, encoding="utf-8")))
    assert [c["label"] for c in table.columns] == rows[0][2:]
    expected = [(r[0], [None if not v.strip() else float(v) if re.fullmatch(r"[\d.]+", v) else v for v in r[2:]])
                for r in rows[1:] if any(r)]
    assert table.rows == expected


def test_the_authors_leaderboard_renders_whole(board, shared_data):
    """The CrossCheckGPT authors' models x benchmarks table (POPE, CHAIR, UniHD, SelfCheckGPT, CrossCheck for nine
    models) is carried by the page: every model, column and value of their file."""
    _, site, _ = board
    page = (site / "published.html").read_text()
    rows = list(csv.reader(open(shared_data / "leaderboard" / "img2img-hallucination.csv", encoding="utf-8")))
    section = page[page.index('id="published-mhalubench_leaderboard"'):]
    section = html.unescape(section[:section.index("</section>")])
    for label in rows[0][2:]:
        assert f"<button>{label}</button>" in section
    shown = re.findall(r'<tr data-model="([^"]*)" class="published-row">(.*?)</tr>', section, re.S)
    assert [m for m, _ in shown] == [r[0] for r in rows[1:]] and len(shown) == 9
    for (_, cells), row in zip(shown, rows[1:]):
        values = re.findall(r"<td data-sort=\"[^\"]*\">([^<]*)</td>", cells)
        assert [float(v) if re.fullmatch(r"[\d.]+", v) else v for v in values] == \
            [float(v) if re.fullmatch(r"[\d.]+", v) else v for v in row[2:]]


def test_a_board_of_mini_runs_is_pushed_only_when_allowed(tmp_path, monkeypatch, capsys):
    from hub_server import StandInHub

    runs = [write_pope_run(tmp_path / "a", "org/a", 0.5, mini=True), write_pope_run(tmp_path / "b", "org/b", 0.5)]
    monkeypatch.setenv("HF_TOKEN", "hf_StandInToken")
    hub = StandInHub({})
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    try:
        assert main(["view", *map(str, runs), "--out", str(tmp_path / "s"), "--push-to-hub", "me/board"]) == 2
        assert "--allow-mini-data" in capsys.readouterr().err and hub.requests == []
    finally:
        hub.close()


def test_cchall_table_1_is_the_papers_text(shared_data):
    """Each row of cchall_table1.yaml ("model · strategy") is a row of Table 1 in the paper's full text."""
    text = (shared_data.parent / "papers" / "cchall.txt").read_text()
    part = text[text.index("| Model | AMBER |"):text.index("Table 1: The experimental results of Acc.")]
    printed, model = {}, ""
    for line in [line for line in part.splitlines() if line.startswith("|")][3:]:
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in line.strip().strip("|").split("|")]
        if not cells[1]:  # a model's heading row
            model = re.sub(r"\s*\(.*\)$", "", cells[0]) + " · "
            continue
        printed[model + re.sub(r"\s*\(.*\)$", "", cells[0])] = [float(c) for c in cells[1:]]
    table = read_table(FOLDER / "cchall_table1.yaml")
    assert len(table.rows) == 31 and dict(table.rows) == printed
