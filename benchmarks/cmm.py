"""CMM (Leng et al. 2024, "The Curse of Multi-Modalities"): 2,400 yes/no probes over six sub-categories.

Prompt: the probe question followed by " Answer with yes or no." (the released questions carry no
suffix; the paper appends it). The paper samples at temperature 0.2. The model sees the probe's video
frames (`video_path`) and audio (`audio_path`) where the release has them (null media are omitted).

Scored by `pa_hr` with the paper's rule (§5: "based on whether the response begins with 'yes' or 'no'"),
i.e. the release's `evaluation/calculate_score.py`: `mode="official"`, so the headline PA/HR/accuracy
are comparable with the paper's Tables 2-5. The strict `yes_no` parser still logs each answer and
counts the unparseable ones (`n_unparsed`) beside them. Groups: each sub_category (Table 2) and each
sub_category × granularity (object-level / event-level, Tables 3-4).

By part, as Table 2 reports models: `cmm` (all six, Table 2a: visual-audio models), `cmm_visual` (Visual-Language
and Language Dominance, the probes over video alone: Table 2b, visual-only models), `cmm_audio` (Audio-Language,
over audio alone: Table 2c, audio-only models) and `cmm_audio_visual` (the three sub-categories over video with
its audio). A part task shows only its part's medium, so a one-medium model runs it as it is. A probe is never
asked without a medium it has: under a `--modality` that removes one (e.g. `cmm --modality visual-only`) it is
left out of the scores and counted (`n_without_media` in results.json).
"""
import dataclasses

from hallubench.benchmarks.task import MediaSpec, Row, Task, one_of, yes_no
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_task

SUFFIX = " Answer with yes or no."
PARTS_HINT = "the paper evaluates one-medium models on their own parts: --tasks cmm_visual (Table 2b) or cmm_audio (Table 2c)"
# part task -> (its sub-categories, the media it shows): Table 2b, 2c, and the rest of 2a
ABOUT = {
    "cmm_visual": "CMM's visual probes (video only): does the model see what language priors suggest?",
    "cmm_audio": "CMM's audio probes (audio only): does the model hear what is there?",
    "cmm_audio_visual": "CMM's audio-visual probes: does one medium make the model hallucinate the other?",
}
PARTS = {
    "cmm_visual": (("visual-language", "overrely_language_ignore_visual"), MediaSpec(video="video_path")),
    "cmm_audio": (("audio-language",), MediaSpec(audio="audio_path")),
    "cmm_audio_visual": (("visual-audio-language", "overrely_visual_ignore_audio", "overrely_audio_ignore_visual"),
                         MediaSpec(video="video_path", audio="audio_path")),
}


def prompt(row: Row) -> str:
    """The question as released plus the paper's yes/no instruction."""
    return row["question"] + SUFFIX


def groups(row: Row) -> tuple[str, str]:
    """The probe's sub_category, and its sub_category × granularity ("visual-language / object-level")."""
    return row["sub_category"], f"{row['sub_category']} / {row['granularity']}"


CMM = Task(
    name="cmm",
    description="CMM's yes/no probes of all six sub-categories, each with its video and audio",
    benchmark="cmm",
    config="all",
    prompt=prompt,
    media=MediaSpec(video="video_path", audio="audio_path", needs_all=True, parts_hint=PARTS_HINT),
    generation=GenerationSettings(max_new_tokens=32, temperature=0.2),
    parser="yes_no",
    metric="pa_hr",
    metric_args={"mode": "official"},
    # yes_ratio is best at the references' share (0.5 in CMM), so neither direction is better.
    higher_is_better={"pa": True, "hr": True, "accuracy": True, "yes_ratio": None},
    # 2: headline by the paper's "begins with yes/no" rule, sub_category × granularity groups;
    # 3: a probe whose medium --modality removes is left out and counted, not asked without it
    version=3,
    reference=lambda row: one_of(row, "answer", ("yes", "no"), yes_no),
    group=groups,
    source="Leng et al. 2024, arXiv:2410.12787; github.com/DAMO-NLP-SG/CMM",
    demo=True,
    answer_words=("yes", "no"),  # Figure 2's p("yes" | v, a, x) and p("no" | v, a, x): --answer-probs
)
register_task(CMM)


def _part(name: str, sub_categories: tuple[str, ...], media: MediaSpec) -> Task:
    return dataclasses.replace(CMM, name=name, media=dataclasses.replace(media, needs_all=True, parts_hint=PARTS_HINT),
                               exclude=lambda row: row["sub_category"] not in sub_categories, version=1, demo=False)


for _name, (_sub_categories, _media) in PARTS.items():
    register_task(dataclasses.replace(_part(_name, _sub_categories, _media), description=ABOUT[_name]))
