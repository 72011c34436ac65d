"""Judging keeps what it got: a judge failing on one pair of a batch loses none of the others (each is
cached as it arrives), the pair is retried alone, then recorded as a judge error (counted, reported with
its board, system, document and sentence, never cached); --strict-judging stops instead."""
import json

import pytest

from hallubench.cli.main import main
from hallubench.judges import JudgmentCache
from hallubench.judges.base import BaseJudge, Judgment
from hallubench.judges.cached_judge import CachedJudge, JudgeError
from hallubench.models import GenerationError

from conftest import API_KEY, openai_run_argv


class FlakyJudge(BaseJudge):
    """Scores by word overlap; a batch holding a sentence with `poison` fails like an LLM server would."""

    judge_id, prompt_version = "flaky-test-judge", "v1"

    def __init__(self, poison="POISON", fail_alone=True):
        super().__init__()
        self.poison, self.fail_alone, self.batches = poison, fail_alone, []

    def _judge(self, pairs):
        self.batches.append(len(pairs))
        bad = [i for i, (sentence, _) in enumerate(pairs) if self.poison in sentence]
        if bad and (self.fail_alone or len(pairs) > 1):
            raise GenerationError(f"conversation {bad[0]}: HTTP 500", index=bad[0])
        return [Judgment(score=0.0 if sentence.split()[0] in evidence else 1.0) for sentence, evidence in pairs]


PAIRS = [(f"word{i} here", "word1 word2 word3") for i in range(6)] + [("POISON sentence", "evidence")]


def test_a_failing_pair_costs_only_itself(tmp_path):
    cache = JudgmentCache(tmp_path / "j.sqlite")
    judge = CachedJudge(FlakyJudge(), cache, batch_size=16)
    judgments = judge.judge_batch(PAIRS)
    assert [j.score for j in judgments[:6]] == [1.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    assert judgments[6].undecided and judgments[6].raw.startswith("judge error: conversation 0: HTTP 500")
    assert judge.counters["errors"] == 1 and judge.errors[0]["sentence"] == "POISON sentence"
    assert len(cache) == 6, "every judgment received is cached; the failed one is not"
    rerun = CachedJudge(FlakyJudge(fail_alone=False), cache, batch_size=16)
    assert rerun.judge_batch(PAIRS)[6].score == 1.0 and rerun.counters["calls"] == 1  # only the failed pair


def test_strict_judging_stops_after_caching_what_came(tmp_path):
    cache = JudgmentCache(tmp_path / "j.sqlite")
    judge = CachedJudge(FlakyJudge(), cache, batch_size=16, strict=True)
    with pytest.raises(JudgeError, match="judging sentence 'POISON sentence' against evidence 'evidence' failed"):
        judge.judge_batch(PAIRS)
    assert len(cache) == 6


@pytest.fixture
def two_runs(server, data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("HB_RELIABILITY_KEY", API_KEY)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    runs = []
    for name in ("a", "b"):
        runs.append(tmp_path / name)
        assert main(openai_run_argv(server, data_dir, runs[-1], "--num-samples", "2", tasks="avhallubench_visual")) == 0
    return runs


@pytest.mark.parametrize("strict", [False, True])
def test_rank_reports_judge_errors_naming_system_document_and_sentence(two_runs, tmp_path, monkeypatch, capsys,
                                                                      strict):
    from hallubench.ranking import judging

    flaky = FlakyJudge(poison="yes")  # the server answers "yes": every target sentence fails
    monkeypatch.setattr(judging, "make_judge", lambda kind, args, cache: CachedJudge(flaky, cache))
    out = tmp_path / "ranking"
    argv = ["rank", *map(str, two_runs), "--output-dir", str(out), "--cache", str(tmp_path / "j.sqlite")]
    code = main(argv + (["--strict-judging"] if strict else []))
    captured = capsys.readouterr()
    if strict:
        assert code == 1 and "judging sentence 'yes' against evidence" in captured.err
        assert not (out / "crosscheck.json").exists()
        return
    assert code == 0
    errors = json.loads((out / "crosscheck.json").read_text())["judge"]["errors"]
    assert errors and {e["system"] for e in errors} == {"a", "b"}
    assert all(e["board"] == "avhallubench_visual" and e["sentence"] == "yes" and e["document"] for e in errors)
    assert "judgments failed** (judge errors, scored 0.5, not cached" in captured.out
