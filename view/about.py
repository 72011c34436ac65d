"""What made the site and how to cite it: the hallubench version, the date, the command that wrote it, and BibTeX for
the package and the seed papers it implements (titles and authors as the papers print them)."""
from __future__ import annotations

from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Sequence

from hallubench.harness.command import command_line

PAPERS = (
    ("sun2024crosscheckgpt", "CrossCheckGPT: Universal Hallucination Ranking for Multimodal Foundation Models",
     "Sun, Guangzhi and Manakul, Potsawee and Liusie, Adian and Pipatanakul, Kunat and Zhang, Chao and Woodland, Phil "
     "and Gales, Mark", 2024, "AVHalluBench, CrossCheck, RefCheck"),
    ("chen2024unihd", "Unified Hallucination Detection for Multimodal Large Language Models",
     "Chen, Xiang and Wang, Chenxi and Xue, Yida and Zhang, Ningyu and Yang, Xiaoyan and Li, Qiang and Shen, Yue and "
     "Liang, Lei and Gu, Jinjie and Chen, Huajun", 2024, "MHaluBench, UniHD"),
    ("leng2024cmm", "The Curse of Multi-Modalities: Evaluating Hallucinations of Large Multimodal Models across "
     "Language, Visual, and Audio",
     "Leng, Sicong and Xing, Yun and Cheng, Zesen and Zhou, Yang and Zhang, Hang and Li, Xin and Zhao, Deli and Lu, "
     "Shijian and Miao, Chunyan and Bing, Lidong", 2024, "CMM, PA/HR"),
    ("zhang2025cchall", "CCHall: A Novel Benchmark for Joint Cross-Lingual and Cross-Modal Hallucinations Detection "
     "in Large Language Models",
     "Zhang, Yongheng and Liu, Xu and Zhou, Ruoxi and Chen, Qiguang and Fei, Hao and Lu, Wenpeng and Qin, Libo", 2025,
     "CCHall"),
    ("zhang2023sac3", "SAC3: Reliable Hallucination Detection in Black-Box Language Models via Semantic-aware "
     "Cross-check Consistency",
     "Zhang, Jiaxin and Li, Zhuohang and Das, Kamalika and Malin, Bradley and Kumar, Sricharan", 2023, "SAC3"),
)


def package_version() -> str:
    try:
        return version("hallubench")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _bibtex(key: str, fields: dict[str, Any]) -> str:
    return f"@misc{{{key},\n" + "".join(f"  {name} = {{{value}}},\n" for name, value in fields.items()) + "}"


def citations(hallubench_version: str, year: int) -> list[dict[str, str]]:
    """The package first, then the seed papers, each with what hallubench takes from it and its BibTeX."""
    package = {"what": "this package", "title": "hallubench", "bibtex": _bibtex("hallubench", {
        "title": "hallubench: measure hallucination in audio, video and image language models",
        "author": "{The hallubench authors}",
        "year": year, "version": hallubench_version, "note": "Python package; see its CITATION.cff"})}
    return [package] + [{"what": what, "title": title, "bibtex": _bibtex(key, {"title": title, "author": authors,
                                                                               "year": year_})}
                        for key, title, authors, year_, what in PAPERS]


def about_context(folders: Sequence[Path], out: Path, options: Sequence[str] = (), command: str | None = None
                  ) -> dict[str, Any]:
    """Version, date (UTC), the command that made the site (`hallubench view FOLDER... --output-dir OUT` and its
    other `options`, unless given) and the citations."""
    now = datetime.now(timezone.utc)
    made = command or command_line(["view", *map(str, folders), "--output-dir", str(out), *options])
    release = package_version()
    return {"version": release, "date": now.strftime("%Y-%m-%d %H:%M UTC"), "command": made,
            "citations": citations(release, now.year)}
