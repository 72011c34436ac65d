"""CMM (Leng et al. 2024, "The Curse of Multi-Modalities"): 2,400 yes/no probes over six sub-categories.

Prompt: the probe question followed by " Answer with yes or no." (the released questions carry no
suffix; the paper appends it). The paper samples at temperature 0.2. The model sees the probe's video
frames (`video_path`) and audio (`audio_path`) where the release has them (null media are omitted).

Scored by `pa_hr` with the paper's rule (§5: "based on whether the response begins with 'yes' or 'no'"),
i.e. the release's `evaluation/calculate_score.py`: `mode="official"`, so the headline PA/HR/accuracy
are comparable with the paper's Tables 2-5. The strict `yes_no` parser still logs each answer and
counts the unparseable ones (`n_unparsed`) beside them. Groups: each sub_category (Table 2) and each
sub_category × granularity (object-level / event-level, Tables 3-4).
"""
from hallubench.benchmarks.task import MediaSpec, Row, Task, one_of, yes_no
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_task

SUFFIX = " Answer with yes or no."


def prompt(row: Row) -> str:
    """The question as released plus the paper's yes/no instruction."""
    return row["question"] + SUFFIX


def groups(row: Row) -> tuple[str, str]:
    """The probe's sub_category, and its sub_category × granularity ("visual-language / object-level")."""
    return row["sub_category"], f"{row['sub_category']} / {row['granularity']}"


register_task(
    Task(
        name="cmm",
        benchmark="cmm",
        config="all",
        prompt=prompt,
        media=MediaSpec(video="video_path", audio="audio_path"),
        generation=GenerationSettings(max_new_tokens=32, temperature=0.2),
        parser="yes_no",
        metric="pa_hr",
        metric_args={"mode": "official"},
        # yes_ratio is best at the references' share (0.5 in CMM), so neither direction is better.
        higher_is_better={"pa": True, "hr": True, "accuracy": True, "yes_ratio": None},
        version=2,  # 2: headline by the paper's "begins with yes/no" rule, sub_category × granularity groups
        reference=lambda row: one_of(row, "answer", ("yes", "no"), yes_no),
        group=groups,
        source="Leng et al. 2024, arXiv:2410.12787; github.com/DAMO-NLP-SG/CMM",
        demo=True,
    ),
)
