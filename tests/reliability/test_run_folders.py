"""A run folder is data: reloading its model (`rank --judge implicit`) never runs code it names
(trust_remote_code), never reads a credential from an environment variable it names and never reaches a server it
names, nor reads a path outside the folder it names, unless the user says so with `--judge-args
trust_run_models=true`; the refusal names the field and the flag, and comes before anything loads or connects. (The whole path through `rank` with a server: test_ranking_implicit.)"""
import json

import pytest

from hallubench.errors import ConfigError
from hallubench.ranking.implicit_evidence import read_evidence_run


def run_folder(tmp_path, model, model_args):
    folder = tmp_path / "someone-elses-run"
    folder.mkdir()
    results = {"run": {"options": {"model": model, "model_args": model_args, "tasks": ["avhallubench_visual"]}},
               "model": {"name": model, "fingerprint": "0123456789abcdef"}, "tasks": {}}
    (folder / "results.json").write_text(json.dumps(results))
    return folder


@pytest.mark.parametrize("model,model_args,field", [
    ("hf", {"model": "org/custom", "trust_remote_code": True}, "run.options.model_args.trust_remote_code=True would"),
    ("openai", {"model": "m", "base_url": "http://203.0.113.9/v1", "api_key_env": "HF_TOKEN"},
     "run.options.model_args.base_url='http://203.0.113.9/v1' (as recorded) is a server it would connect to; "
     "run.options.model_args.api_key_env='HF_TOKEN' (as recorded) is the environment variable whose value it would send"),
    ("openai", {"model": "m"}, "run.options.model_args.base_url='https://api.openai.com/v1' (the plug-in's default"),
    # the reported case: the search tool counted as local (its config has a device), so nothing was checked
    ("search", {"model": "serper", "base_url": "http://203.0.113.9", "api_key_env": "HF_TOKEN"},
     "run.options.model_args.base_url='http://203.0.113.9' (as recorded)"),
    ("hf", {"pretrained": "/opt/models/ckpt"}, "run.options.model_args.pretrained='/opt/models/ckpt' is a path outside"),
])
def test_what_a_run_folder_names_is_not_run_nor_reached_without_the_users_word(tmp_path, monkeypatch, model,
                                                                               model_args, field):
    monkeypatch.setenv("HF_TOKEN", "hf_never_read_0123456789")
    folder = run_folder(tmp_path, model, model_args)
    with pytest.raises(ConfigError) as refused:
        read_evidence_run("other", folder)
    assert field in str(refused.value) and "--judge-args trust_run_models=true" in str(refused.value)
    assert "hf_never_read" not in str(refused.value)
    # With the user's word the check lets it through (this folder then lacks its samples: another error).
    with pytest.raises(ConfigError) as later:
        read_evidence_run("other", folder, trusted=True)
    assert "trust_run_models" not in str(later.value)


def test_a_malformed_recorded_value_is_refused_naming_the_file(tmp_path):
    folder = run_folder(tmp_path, "hf", {"model": "org/custom", "trust_remote_code": "yes"})
    with pytest.raises(ConfigError, match=r"results.json: reloading the hf adapter: trust_remote_code must be true or "
                                          r"false; got 'yes'"):
        read_evidence_run("other", folder, trusted=True)


def test_a_results_json_that_is_not_one_is_named(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.json").write_text('{"run": 5}')
    with pytest.raises(ConfigError, match=r"results.json: not a results.json of `hallubench run`"):
        read_evidence_run("x", folder)
