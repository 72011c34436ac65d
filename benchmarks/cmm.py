"""CMM (Leng et al. 2024, "The Curse of Multi-Modalities"): 2,400 yes/no probes over six sub-categories.

Prompt: the probe question followed by " Answer with yes or no." (the released questions carry no
suffix; the paper appends it). The paper samples at temperature 0.2. The model sees the probe's video
frames (`video_path`) and audio (`audio_path`) where the release has them (null media are omitted).
Scored by `pa_hr` (perception accuracy / hallucination resistance) with a per-sub-category breakdown.
"""
from hallubench.benchmarks.task import MediaSpec, Row, Task
from hallubench.models.protocol import GenerationSettings

SUFFIX = " Answer with yes or no."


def prompt(row: Row) -> str:
    """The question as released plus the paper's yes/no instruction."""
    return row["question"] + SUFFIX


TASKS = (
    Task(
        name="cmm",
        benchmark="cmm",
        config="all",
        prompt=prompt,
        media=MediaSpec(video="video_path", audio="audio_path"),
        generation=GenerationSettings(max_new_tokens=32, temperature=0.2),
        parser="yes_no",
        metric="pa_hr",
        reference=lambda row: row["answer"],
        group=lambda row: row["sub_category"],
        source="Leng et al. 2024, arXiv:2410.12787; github.com/DAMO-NLP-SG/CMM",
    ),
)
