"""`hallubench run` checks every task's dataset (there, loadable, the columns its prompt and metric need) before it
builds the model: a stand-in adapter records whether it was built."""
from __future__ import annotations

import shutil

import pandas as pd
import pytest

from hallubench.errors import ConfigError
from hallubench.harness.options import RunOptions
from hallubench.harness.runner import run
from hallubench.registry import MODELS


class Built(Exception):
    """The stand-in adapter was built: the run got past its data checks."""


@pytest.fixture
def recording(monkeypatch):
    def factory(**model_args):
        raise Built(model_args)

    monkeypatch.setitem(MODELS, "recording", factory)


def _options(data_dir, tmp_path) -> RunOptions:
    return RunOptions(model="recording", model_args={"pretrained": "stand-in"}, tasks=["cmm"], data_dir=str(data_dir),
                      output_dir=tmp_path / "run", limit=2)


def test_good_data_gets_to_the_model(recording, mini_datasets, tmp_path):
    with pytest.raises(Built):
        run(_options(mini_datasets, tmp_path))


def test_a_missing_dataset_stops_the_run_before_the_model_is_built(recording, tmp_path):
    (tmp_path / "datasets").mkdir()
    with pytest.raises(ConfigError, match="cmm"):
        run(_options(tmp_path / "datasets", tmp_path))


def test_a_dataset_edited_after_build_stops_the_run_before_the_model_is_built(recording, mini_datasets, tmp_path):
    """Its `question` column dropped: refused as changed since the build (found before reading any row)."""
    data = tmp_path / "datasets"
    shutil.copytree(mini_datasets / "cmm", data / "cmm")
    for parquet in (data / "cmm").rglob("*.parquet"):
        frame = pd.read_parquet(parquet)
        frame.drop(columns=["question"]).to_parquet(parquet)
    with pytest.raises(ConfigError, match="was changed after `hallubench build`"):
        run(_options(data, tmp_path))
