"""`build_site`: a ranking folder (and run folders) -> a static site that works opened from disk.

index.html opens on the ranking (a tab per board), then the models x benchmarks grid and an About section (version,
date, command, citations); published.html holds the papers' tables; items/<board>/<n>.html one page per (board,
item) with each model's sentences coloured by CrossCheck score; runs/<n>.html one page per run folder with every
sample; data/ every board and the grid as CSV and JSON. File names are numbers, never the ids or names a ranking or
run holds (those are data: escaped text, never part of a path; their control characters shown as escapes). Media
are copied into media/ from the dataset folder the runs read, so the site can be moved or pushed whole.
"""
from __future__ import annotations

import hashlib
import logging
import shutil
from pathlib import Path, PurePosixPath
from typing import Iterable, Sequence

import jinja2
import markupsafe

from hallubench.confined import Folder, given_folder
from hallubench.errors import ConfigError, RunFolderNotFoundError, UnnamedFolderError, VerdictMismatchError
from hallubench.harness.command import command_line
from hallubench.harness import store
from hallubench.harness.command import rescore_hint
from hallubench.harness.atomic import replace_folder
from hallubench.markup import escape_page_controls
from hallubench.view.about import about_context
from hallubench.view.board import board_context, ranking_columns
from hallubench.view.downloads import write_downloads
from hallubench.view.names import SiteModel, name_models, page_names
from hallubench.view.pages import (BINS, document_context, leaderboard_context, run_context, search_entries,
                                   score_bin)
from hallubench.view.published import published_context, published_tables
from hallubench.view.sources import (CROSSCHECK_JSON, RankingFolder, RunFolder, media_file, read_ranking, read_run_folder,
                                     task_dataset_folder)
from hallubench.view.status import run_status
from hallubench.writes import check_replaceable, mark_folder

log = logging.getLogger("hallubench")
HERE = Path(__file__).parent
ASSETS = ("style.css", "viewer.js")
MEDIA_SUFFIXES = {".mp4": "video", ".webm": "video", ".mkv": "video", ".mov": "video", ".avi": "video",
                  ".wav": "audio", ".mp3": "audio", ".flac": "audio", ".m4a": "audio", ".ogg": "audio",
                  ".png": "image", ".jpg": "image", ".jpeg": "image", ".gif": "image", ".webp": "image"}


def _shown(value: object) -> object:
    """Every value a template prints: plain text with its control characters made visible (markup the templates
    made, such as `tojson`, is left alone: JSON escapes them itself)."""
    return escape_page_controls(value) if isinstance(value, str) and not isinstance(value, markupsafe.Markup) else value


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, finalize=_shown)
    env.filters["num"] = lambda value, digits=3: "–" if value is None else f"{value:.{digits}f}"
    env.filters["pval"] = lambda value: "–" if value is None else f"{value:.3g}"
    env.globals.update(bins=BINS, score_bin=score_bin)
    return env


class MediaCopier:
    """Copies each dataset media file once into the site's media/ folder, through the door."""

    def __init__(self, site: Path):
        self.folder, self.copied = site / "media", {}

    def __call__(self, folder: Path, name: str) -> str | None:
        """The site-relative path of the copy of the file `name` of the dataset `folder` (view/sources.media_file), or
        None for a file type the browser cannot show. Read through the door (hallubench/confined.py): a link out of
        the folder, a FIFO, a file past the bound or one swapped for a link meanwhile is refused."""
        suffix = PurePosixPath(name).suffix.lower()  # the name's: a Hub snapshot's file is a link to a blob without one
        if suffix not in MEDIA_SUFFIXES:
            return None
        door = Folder(folder, hub_snapshot=True)
        source = door.path(name)
        if source not in self.copied:
            self.folder.mkdir(exist_ok=True)
            target = self.folder / (hashlib.sha256(str(source).encode()).hexdigest()[:16] + suffix)
            if not target.exists():
                door.copy(name, target)
            self.copied[source] = f"media/{target.name}"
        return self.copied[source]


def _site_folder(out: Path) -> Path:
    """`out` checked for a new site: new, empty, or a site written there before (found by its mark, hallubench/writes.py), which the
    new one replaces whole (harness/atomic.py `replace_folder`); a folder holding anything else is refused rather
    than mixed with or deleted."""
    check_replaceable(out, "--output-dir", "site")
    return out


def _runs_of_ranking(ranking: RankingFolder, given: Sequence[RunFolder]) -> dict[str, RunFolder]:
    """Model name -> its run folder among those given on the command line: by folder name, else the one at the path
    the ranking recorded. The ranking's record is data: a recorded folder the user did not give is an
    UnnamedFolderError naming it (never read, never uploaded); a run not found is left out."""
    by_name = {run.folder.name: run for run in given}
    by_path = {run.folder: run for run in given}
    out = {}
    for name, recorded in (ranking.data.get("runs") or {}).items():
        if name in by_name:
            out[name] = by_name[name]
            continue
        folder = given_folder(recorded, by_path, f"{ranking.folder / CROSSCHECK_JSON} (model {str(name)!r})",
                              f"Give that run folder too: {command_line(['view', str(ranking.folder), str(recorded)])}"
                              " (with the other run folders you show)")
        if folder is not None:
            out[name] = by_path[folder]
    return out


def _media_of(runs: dict[str, RunFolder], task: str, data_dir: Path | None, copy: MediaCopier) -> dict[str, list]:
    """item id -> the media its records name (first run holding the item), each with its copy in the site when
    the dataset folder is on this machine and given, else only the recorded path (and, once, why: `withheld`)."""
    out: dict[str, list] = {}
    for run in runs.values():
        try:
            folder, withheld = task_dataset_folder(run, task, data_dir), None
        except UnnamedFolderError as err:  # the run's recorded --data-dir, which the user did not give
            folder, withheld = None, str(err)
        for item, record in run.by_task().get(task, {}).items():
            if item in out:
                continue
            entries: dict[str, dict] = {}  # one player per file: a video's frames and its audio track share it
            for kind, seen in (record.get("media") or {}).items():
                if not isinstance(seen, dict):
                    continue
                path = str(seen.get("path"))
                if path not in entries:
                    name = media_file(folder, seen.get("path"))
                    src = copy(folder, name) if name is not None else None
                    entries[path] = {"path": path, "src": src, "seen": {},
                                     "element": MEDIA_SUFFIXES.get(PurePosixPath(name).suffix.lower()) if src else None}
                entries[path]["seen"][kind] = seen
            out[item] = {"media": list(entries.values()), "reference": record.get("reference"),
                         "prompt": record.get("prompt"), "withheld": withheld if entries else None}
    return out


def _board_task(board: str, tasks: Iterable[str]) -> str:
    """The task whose records hold a board's items: the board's own name, or the task of an audio-visual board."""
    known = set(tasks)
    return board if board in known or not board.endswith("_av") else board[: -len("_av")]


def is_mini(ranking_dir: Path | None, run_dirs: Sequence[Path] = ()) -> bool:
    """Whether the ranking or any of the run folders was made on the embedded synthetic mini benchmarks."""
    if ranking_dir is not None and read_ranking(Path(ranking_dir)).data.get("mini_data"):
        return True
    return any(((read_run_folder(Path(d)).results.get("run") or {}).get("mini_data")) for d in run_dirs)


def split_folders(paths: Sequence[Path]) -> tuple[Path | None, list[Path]]:
    """(the ranking folder, the run folders) among `paths`: a ranking folder holds crosscheck.json; at most one."""
    rankings = [Path(p) for p in paths if Folder(p).is_file(CROSSCHECK_JSON)]
    if len(rankings) > 1:
        raise ConfigError(f"hallubench view: {len(rankings)} ranking folders given ({', '.join(map(str, rankings))}); "
                          "give at most one, plus any run folders")
    runs = [Path(p) for p in paths if Path(p) not in rankings]
    for folder in runs:
        if not Folder(folder).is_file(store.MERGED) and not Folder(folder).names(store.RANK_GLOB):
            raise RunFolderNotFoundError(f"{folder} is neither a ranking folder (no {CROSSCHECK_JSON}: make one with "
                                         f"`hallubench rank`) nor a run folder (no {store.MERGED}: make one with "
                                         f"`hallubench run --output-dir {folder} ...`)")
    return (rankings[0] if rankings else None), runs


def _ranked_pages(ranking: RankingFolder, runs: dict[str, RunFolder], run_pages: Sequence[tuple[str, RunFolder]]
                  ) -> dict[str, str | None]:
    """Each model of the ranking (best of its first board first) -> the page of its run folder when given."""
    pages = {run.folder.resolve(): path for path, run in run_pages}
    models = dict.fromkeys(model for board in ranking.data["boards"].values() for model in board["ranking"])
    return {model: pages.get(runs[model].folder.resolve()) if model in runs else None for model in models}


def _links(models: Sequence[SiteModel]) -> dict[str, dict[str, str | None]]:
    """Ranked model -> its run page, Hub id and tooltip, for its board rows."""
    return {m.name: {"href": m.runs[0][0] if m.runs else None, "hub_id": m.hub_id, "full": m.full}
            for m in models if m.ranked}


def _write_assets(out: Path, search: list[dict[str, str]]) -> None:
    (out / "assets").mkdir(exist_ok=True)
    for name in ASSETS:
        shutil.copyfile(HERE / "assets" / name, out / "assets" / name)
    (out / "assets" / "items.js").write_text(
        "window.HALLUBENCH_ITEMS = " + jinja2.utils.htmlsafe_json_dumps(search) + ";\n", encoding="utf-8")


def build_site(ranking_dir: Path | None, run_dirs: Sequence[Path] = (), out: Path = Path("site"), *,
               reference: Path | None = None, reference_higher_is_better: bool = False,
               data_dir: Path | None = None, command: str | None = None) -> Path:
    """Write the site of `ranking_dir` (None: run folders alone) and a page for each of `run_dirs` into `out`; the
    path of its index.html. The index opens on the ranking's CrossCheck boards, then the models x benchmarks grid
    and the About section. `reference` (a `--reference` file of `hallubench rank`) adds rank correlations with it;
    `data_dir` is where the runs' datasets are when not where the runs recorded; `command` what the About section
    names as the command that made the site (default: `hallubench view` of these folders)."""
    if ranking_dir is None and not run_dirs:
        raise ConfigError("hallubench view: give a ranking folder, run folders, or both")
    ranking = read_ranking(Path(ranking_dir)) if ranking_dir is not None else None
    given = [read_run_folder(Path(d)) for d in run_dirs]
    ref = None
    if reference and ranking is not None:  # correlate imports evaluate and torch (seconds): only when asked
        from hallubench.ranking.correlate import load_reference

        ref = load_reference(Path(reference), reference_higher_is_better)
    folders = ([Path(ranking_dir)] if ranking_dir is not None else []) + [Path(d) for d in run_dirs]
    options = [*(["--reference", str(reference)] if reference else []),
               *(["--reference-higher-is-better"] if reference and reference_higher_is_better else []),
               *(["--data-dir", str(data_dir)] if data_dir else [])]
    about = about_context(folders, Path(out), options, command)
    final = _site_folder(Path(out))
    with replace_folder(final) as out:  # built beside, then swapped in whole: a failure leaves the old site
        mark_folder(out, "hallubench view --output-dir")
        env, copy = environment(), MediaCopier(out)
        env.globals["has_ranking"] = ranking is not None  # the nav links only to sections the site has
        run_pages = [(f"runs/{k}.html", run) for k, run in enumerate(given)]
        read = [(path, run, run_status(run)) for path, run in run_pages]
        runs = _runs_of_ranking(ranking, given) if ranking is not None else {}
        models = name_models(read, _ranked_pages(ranking, runs, run_pages) if ranking is not None else {})
        context = {"title": "hallubench leaderboard", "boards": [], "banners": [], "about": about}
        search: list[dict[str, str]] = []
        ranked = []
        if ranking is not None:
            tasks = {record["task"] for run in runs.values() for record in run.records}
            boards = list(ranking.data["boards"])
            items = {name: _media_of(runs, _board_task(name, tasks), data_dir, copy) for name in boards}
            for note in sorted({i["withheld"] for board in items.values() for i in board.values() if i["withheld"]}):
                log.warning("hallubench view: media not shown: %s", note)
            search = search_entries(ranking, items)
            page = env.get_template("document.html")
            for b, name in enumerate(boards):
                folder = out / "items" / str(b)
                folder.mkdir(parents=True, exist_ok=True)
                for item in document_context(ranking, name, b, items[name]):
                    (folder / f"{item['number']}.html").write_text(page.render(root="../../", **item), encoding="utf-8")
            ranked = ranking_columns(ranking.data)
            context.update(leaderboard_context(ranking, ref, _links(models)), title="CrossCheck leaderboard")
        _write_assets(out, search)
        if run_pages:
            (out / "runs").mkdir(exist_ok=True)
            page, owners = env.get_template("run.html"), page_names(models)
            for path, run, state in read:
                (out / path).write_text(page.render(root="../", **run_context(run, state, owners[path])),
                                        encoding="utf-8")
        grid = board_context(models, ranked) if run_pages or ranked else None
        downloads = write_downloads(out, context["boards"], grid, about)
        published = published_context(published_tables(), models)
        (out / "published.html").write_text(env.get_template("published.html").render(
            root="", title="The papers' published tables", tables=published, about=about, boards=context["boards"],
            grid=grid, banners=[]), encoding="utf-8")
        index = out / "index.html"
        index.write_text(env.get_template("leaderboard.html").render(root="", matrix=grid, downloads=downloads,
                                                                     **context), encoding="utf-8")
    flagged = unverified(models)
    if flagged:  # the site is written, its pages flag the folders; the caller still learns it, as from `verify`
        raise VerdictMismatchError(f"site written ({final / index.name}), but " + "; ".join(flagged))
    return final / index.name


def unverified(models: Sequence[SiteModel]) -> list[str]:
    """One line per run folder whose results.json is not what its verdicts re-aggregate to (view/status.py)."""
    return [f"{run.folder}: results.json differs from its per-answer verdicts in {', '.join(sorted(state.differing))}; "
            f"its pages carry a VERDICTS DIFFER banner (re-score it with {rescore_hint(run.folder)})" for model in models for _, run, state in model.runs
            if state.differing]
