"""Names we did not write (a model id, a run-folder name, a checkpoint path) in what publish and rank put on the
Hub: the results dataset card (publish/dataset_card.py) and the leaderboard that becomes the ranking's card
(ranking/board.py) show them as text. None can add a heading, a table cell, a link, a line or an HTML tag."""
from __future__ import annotations

import re

import pytest
import yaml
from markdown_it import MarkdownIt

from hallubench.harness.results_schema import ModelInfo, Results, RunInfo, TaskResult
from hallubench.publish.dataset_card import dataset_card, model_folder
from hallubench.ranking.board import Board, Ranking

HOSTILE = ["<script>alert(1)</script>", "a | b | c", "x\n# Injected heading\n| 1 | 2 |", "[click](https://evil.example)",
           "`code` ``` fence", "<img src=x onerror=alert(1)>", "1. list", "# top"]


def _renderer() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")  # CommonMark with GFM tables, as the Hub renders cards


def _tokens(markdown: str):
    return _renderer().parse(markdown)


def _no_tags(markdown: str) -> None:
    html = _renderer().render(markdown)
    assert "<script" not in html and "<img" not in html and 'href="https://evil' not in html, html


def _structure(markdown: str) -> tuple[int, list[int], int, int]:
    """(headings, cells per table row, links, raw HTML blocks or inline HTML) of the rendered markdown."""
    tokens = _tokens(markdown)
    headings = sum(t.type == "heading_open" for t in tokens)
    rows, cells, links, html = [], 0, 0, 0
    for token in tokens:
        if token.type == "tr_open":
            cells = 0
        elif token.type in ("td_open", "th_open"):
            cells += 1
        elif token.type == "tr_close":
            rows.append(cells)
        html += token.type == "html_block"
        for child in token.children or []:
            links += child.type == "link_open"
            html += child.type == "html_inline"
    return headings, rows, links, html


def _card(name: str) -> str:
    task = TaskResult(task="cmm", benchmark="cmm", metric="pa_hr", n_selected=4, n_total=4,
                      metrics={"pa": 0.5, "pa_stderr": 0.1}, dataset={"id": None, "revision": "sha256:" + "0" * 64})
    results = Results(tasks={"cmm": task}, model=ModelInfo(name=name, args={"pretrained": name}, fingerprint=name),
                      run=RunInfo(options={"model": "hf", "model_args": {"pretrained": name}}, from_outputs=name,
                                  finished=name))
    folder = model_folder(results)
    card = dataset_card(results, "me/results", [f"{folder}/samples/cmm.parquet"], partial=[name])
    _, header, body = card.split("---\n", 2)
    assert yaml.safe_load(header)["pretty_name"] == f"hallubench results: {name}"  # YAML quotes it
    return body


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_model_name_adds_nothing_to_the_dataset_card(name):
    plain = _structure(_card("org/model"))
    card = _card(name)
    assert _structure(card) == plain, card
    _no_tags(card)
    title = next(t for t in _tokens(card) if t.type == "inline" and t.content.startswith("hallubench results: "))
    assert " ".join(name.split()) in title.children[0].content  # the whole name, on one line, as text


def _ranking(models: list[str]) -> Ranking:
    docs = ["d1", "d2", "d3"]
    results = {"ranking": models, "scores": {m: 0.1 * i for i, m in enumerate(models)}, "eta": {},
               "selfcheck_scores": {}, "sentence_scores": {m: {d: [0.1 * i, 0.2] for d in docs} for i, m in enumerate(models)},
               "document_scores": {m: [0.1 * i + j for j in range(3)] for i, m in enumerate(models)}}
    board = Board(name="avhallubench_visual", documents=docs, sentences={m: [] for m in models}, results=results,
                  notes=[f"evidence from {models[0]}"])
    judge = {"judge_id": models[0], "prompt_version": "v1", "counters": {"pairs": 1, "errors": 1},
             "errors": [{"board": "b", "system": models[0], "document": "d1", "sentence": models[0], "error": models[0]}]}
    return Ranking(boards=[board], judge=judge, config={}, runs={m: m for m in models}, mini_data={models[0]: ["cmm"]})


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_run_folder_name_adds_nothing_to_the_leaderboard(name):
    plain = _structure(_ranking(["run-a", "run-b"]).table())
    table = _ranking([name, "run-b"]).table()
    assert _structure(table) == plain, table
    _no_tags(table)
    rows = [line for line in table.splitlines() if line.startswith("| ") and re.match(r"\| \d", line)]
    assert len(rows) == 2 and all(len(re.findall(r"(?<!\\)\|", row)) == 9 for row in rows)


def test_a_run_folder_name_with_control_characters_reaches_the_terminal_as_escapes():
    """The terminal table (`rank`'s output) shows a name's escape sequence and line breaks as Python escapes: the
    name can neither clear the screen nor start a line; the markdown escapes the terminal cannot render stay out."""
    name = "run\x1b[2J\nx_y"
    plain = _ranking(["run-a", "run-b"]).table(markdown=False)
    table = _ranking([name, "run-b"]).table(markdown=False)
    assert "\x1b" not in table and table.count("\n") == plain.count("\n")
    assert "| 1 | run\\x1b[2J\\nx_y |" in table  # as the name is, no markdown backslash before `_`
