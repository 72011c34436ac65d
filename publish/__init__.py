"""Publishing to the Hugging Face Hub, shared by runs and rankings: one token and commit path (`hub.py`),
a run folder as a results dataset plus the model's `.eval_results` (`runs.py`, `dataset_card.py`,
`eval_results.py`), and a ranking folder as a dataset (`rankings.py`)."""
