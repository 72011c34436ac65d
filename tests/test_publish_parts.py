"""Pieces of `hallubench publish` that need no Hub: samples parquet, the Hub model id, the rerun command."""
import io
import json

import pyarrow.parquet as pq

from hallubench.publish.dataset_card import reproduce_command
from hallubench.publish.eval_results import hub_model_id
from hallubench.publish.runs import JSON_COLUMN, samples_table
from hallubench.harness.results_schema import ModelInfo, Results, RunInfo


def test_nested_columns_are_kept_and_mixed_types_become_json_text():
    records = [{"id": "a", "media": {"video": {"indices": [1, 2]}}, "reference": "yes"},
               {"id": "b", "media": None, "reference": 3, "error": {"type": "media"}}]
    buffer = io.BytesIO()
    pq.write_table(samples_table(records), buffer)
    table = pq.read_table(io.BytesIO(buffer.getvalue()))
    rows = table.to_pylist()
    assert rows[0]["media"] == {"video": {"indices": [1, 2]}} and rows[1]["error"] == {"type": "media"}
    assert [json.loads(r["reference"]) for r in rows] == ["yes", 3]
    assert table.schema.field("reference").metadata == JSON_COLUMN
    assert table.schema.field("media").metadata is None


def test_hub_model_id_only_for_repo_ids(tmp_path):
    def model_id(value):
        return hub_model_id(Results(model=ModelInfo(name="hf", args={"pretrained": value})))

    assert model_id("Qwen/Qwen2.5-Omni-3B") == "Qwen/Qwen2.5-Omni-3B"
    local = tmp_path / "ckpt"
    local.mkdir()
    assert model_id(str(local)) is None and model_id("/data/org/model") is None
    assert model_id("gpt-4o") is None and model_id("org/bad name") is None
    assert hub_model_id(Results(model=ModelInfo(name="openai", args={"model": "org/served"}))) == "org/served"


def test_reproduce_command_quotes_values_and_drops_the_output_folder():
    options = {"model": "hf", "model_args": {"pretrained": "org/m", "dtype": "float32"}, "tasks": ["cmm", "cchall"],
               "output_dir": "runs/x", "limit": None, "gen_kwargs": {}, "data_dir": "/my data"}
    command = reproduce_command(Results(run=RunInfo(options=options)))
    assert command == ("hallubench run --model hf --model-args pretrained=org/m,dtype=float32 --tasks cmm,cchall "
                       "--data-dir '/my data'")


def test_standard_errors_go_beside_their_metric_not_into_hub_entries():
    from hallubench.publish.dataset_card import results_table
    from hallubench.publish.eval_results import task_entries
    from hallubench.harness.results_schema import TaskResult

    task = TaskResult(task="cmm", metric="pa_hr", n_selected=400, n_total=400,
                      metrics={"pa": 0.615, "pa_stderr": 0.0243, "hr": 0.5, "hr_stderr": None})
    results = Results(tasks={"cmm": task})
    assert [e.task_id for e in task_entries(results, "cmm", "you/cmm", "https://hf.co/x")] == ["cmm_pa", "cmm_hr"]
    table = results_table(results)
    assert "| cmm | pa | 0.6150 ± 0.0243 |" in table and "| cmm | hr | 0.5000 |" in table and "stderr" not in table
