"""VDGD's KL-guided decoding (models/kl_guided.py) on the hf adapter: several steps computed by hand with numpy (the
authors' rule: nucleus candidates at temperature 0.5 / top-p 0.5, each scored by its least KL divergence from a
one-hot to the description's next-token distributions) match the decoder token for token; `cchall_vdgd
--task-args decoding=kl_guided` runs end to end on the mini CCHall with a tiny checkpoint, resumes from its journal,
and is refused, before any sample runs, for an adapter that cannot decode so."""
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from hallubench.cli.main import main
from hallubench.harness import store
from hallubench.models.hf import HFChatModel
from hallubench.models.protocol import GenerationSettings, Message, TextPart

STEPS = 6


@pytest.fixture(scope="module")
def text_model(tiny_checkpoint):
    torch.manual_seed(0)
    return HFChatModel(str(tiny_checkpoint("llama")), dtype="float32", batch_size=1)


def _conversation(text):
    return [Message("user", [TextPart(text)])]


def _log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def _logits(model, ids):
    with torch.no_grad():
        return model.model(input_ids=torch.tensor([ids])).logits[0].double().numpy()


def _nucleus(logits, top_p=0.5, temperature=0.5):
    """The tokens kept by the authors' `top_p_and_temp_filtering`: ascending sort, drop those whose cumulative
    probability is <= 1 - top_p, keep the most likely one always."""
    probs = np.exp(_log_softmax(logits / temperature))
    order = np.argsort(probs, kind="stable")
    removed = np.cumsum(probs[order]) <= 1 - top_p
    removed[-1] = False
    return np.sort(order[~removed])


def _kl_onehot(k, log_q):
    """KL(onehot(k) || q) = sum_i e_i log(e_i / q_i), with 0 log 0 = 0, written out."""
    e = np.zeros_like(log_q)
    e[k] = 1.0
    return float(np.sum(np.where(e > 0, e * (np.log(np.where(e > 0, e, 1.0)) - log_q), 0.0)))


def _by_hand(model, answer_prompt, describe_prompt, description):
    """The first STEPS tokens VDGD picks, with the candidate counts and plain greedy's picks, recomputed step by step
    by full forward passes (no cache)."""
    prompt = model.prepare([_conversation(describe_prompt)])["input_ids"][0].tolist()
    described = model.tokenizer(description, add_special_tokens=False)["input_ids"]
    log_q = _log_softmax(_logits(model, prompt + described)[len(prompt) - 1:-1])  # one row per description token
    ids = model.prepare([_conversation(answer_prompt)])["input_ids"][0].tolist()
    eos = set(np.atleast_1d(model.model.generation_config.eos_token_id))
    picked, counts, greedy = [], [], []
    for _ in range(STEPS):
        logits = _logits(model, ids)[-1]
        keep = _nucleus(logits)
        kl = [min(_kl_onehot(k, row) for row in log_q) for k in keep]
        token = int(keep[int(np.argmin(kl))])
        picked.append(token), counts.append(len(keep)), greedy.append(int(np.argmax(logits)))
        ids.append(token)
        if token in eos:
            break
    return picked, counts, greedy


def test_kl_guided_decoder_matches_the_rule_computed_by_hand(text_model):
    describe, description = "Describe the image in detail.", "A red square moves left while a tone plays."
    answer = "Image description: " + description + "\n\nIs there a dog barking in the video?"
    picked, counts, greedy = _by_hand(text_model, answer, describe, description)
    assert len(picked) >= 3 and max(counts) > 1  # the KL choice decided among several candidates
    assert picked != greedy  # and picked other tokens than plain greedy decoding would
    out = text_model.generate_kl_guided([_conversation(answer)], [(_conversation(describe), description)],
                                        GenerationSettings(max_new_tokens=STEPS))
    assert out == [[text_model.tokenizer.decode(picked, skip_special_tokens=True)]]
    # the token ids themselves, through the same generate path with the processor
    inputs = text_model.prepare([_conversation(answer)])
    from transformers import LogitsProcessorList

    from hallubench.models.kl_guided import KLGuidedLogitsProcessor

    guide = KLGuidedLogitsProcessor([text_model.description_log_probs(_conversation(describe), description)])
    tokens = text_model.model.generate(**inputs, max_new_tokens=STEPS, do_sample=False, top_k=None, top_p=None,
                                       temperature=None, logits_processor=LogitsProcessorList([guide]))
    assert tokens[0, inputs["input_ids"].shape[1]:].tolist() == picked


def test_an_empty_description_leaves_decoding_greedy(text_model):
    conv = _conversation("Is there a dog barking in the video?")
    settings = GenerationSettings(max_new_tokens=4)
    assert text_model.generate_kl_guided([conv], [(_conversation("Describe."), "")], settings) == \
        text_model.generate([conv], settings)


def _run(data, out, model, *extra):
    return main(["run", "--model", model[0], "--model-args", model[1], "--tasks", "cchall_vdgd", "--data-dir",
                 str(data), "--output-dir", str(out), "--limit", "2", "--gen-kwargs", "max_new_tokens=4", *extra])


class Killed(BaseException):
    """Stands in for kill -9: nothing in the harness catches it."""


def _die(*args, **kwargs):
    raise Killed()


def test_cchall_vdgd_kl_guided_runs_end_to_end_and_resumes_after_a_kill(tiny_checkpoint, mini_datasets, tmp_path,
                                                                        monkeypatch):
    model = ("hf", f"pretrained={tiny_checkpoint('qwen2_vl')},dtype=float32")
    out = tmp_path / "run"
    # one batch of both items: killed in the first guided answer, after both descriptions were journalled
    with monkeypatch.context() as patch:
        patch.setattr(HFChatModel, "generate_kl_guided", _die)
        with pytest.raises(Killed):
            _run(mini_datasets, out, model, "--task-args", "decoding=kl_guided", "--batch-size", "2")
    assert {entry["step"] for entry in store.read_store(out, store.STEPS).records.values()} == {"describe"}
    assert not (out / "samples.jsonl").exists()
    with monkeypatch.context() as patch:  # the rerun describes nothing again and decodes the answers guided
        patch.setattr(HFChatModel, "generate", lambda *a, **k: pytest.fail("described again"))
        assert _run(mini_datasets, out, model, "--task-args", "decoding=kl_guided", "--batch-size", "2") == 0
    records, _ = store.read_jsonl(out / "samples.jsonl")
    assert len(records) == 2 and all(r["error"] is None for r in records)
    journal = store.read_store(out, store.STEPS).records.values()
    answers = [entry for entry in journal if entry["step"] == "answer"]
    assert len(answers) == 2 and all(entry["decoding"] == {"kl_guided": "describe"} for entry in answers)
    assert all(r["outputs"] == r["steps"]["answer"]["outputs"][0] for r in records)
    result = json.loads((out / "results.json").read_text())["tasks"]["cchall_vdgd"]
    assert result["task_args"]["decoding"] == "kl_guided" and result["n_scored"] + result["n_unparsed"] == 2


def test_kl_guided_decoding_is_refused_for_an_adapter_without_logits(mini_datasets, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = ("openai", "model=gpt-4o,base_url=http://127.0.0.1:9")
    assert _run(mini_datasets, tmp_path / "run", model, "--task-args", "decoding=kl_guided") == 2
    assert "step 'answer' decodes KL-guided" in capsys.readouterr().err
    assert _run(mini_datasets, tmp_path / "run", model, "--task-args", "decoding=beam") == 2
    assert "decoding must be one of greedy, kl_guided; got 'beam'" in capsys.readouterr().err
    assert not Path(tmp_path / "run" / "samples.jsonl").exists()
