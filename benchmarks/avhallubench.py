"""AVHalluBench (CrossCheckGPT, Sun et al. 2024): free-form descriptions of 175 videos.

Three tasks share the clip (frames plus the video's own audio track) and differ in the question:
"Describe the video in one paragraph." (visual), "Describe the audio in one paragraph." (audio) and
"What does the man/woman say in the video?" (speech). Besides the greedy one-best answer each item gets
`NUM_SAMPLES` stochastic samples (temperature 1.0, top-p 0.9) that cross-checking uses as evidence.
Scoring needs the outputs of several models, so it happens across run folders (metrics/crosscheck);
the human descriptions are kept as references for RefCheck.
"""
from hallubench.benchmarks.task import MediaSpec, Task
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_task

NUM_SAMPLES = 10
CLIP = MediaSpec(video="video", audio="video")
ONE_BEST = GenerationSettings(max_new_tokens=256)
STOCHASTIC = GenerationSettings(max_new_tokens=256, temperature=1.0, top_p=0.9, n=NUM_SAMPLES)
SOURCE = "Sun et al. 2024, CrossCheckGPT, arXiv:2405.13684; Hub scb10x/avhallubench"
SCORED_BY = "crosscheck over the run folders of several models (hallubench.metrics.crosscheck)"


def _task(name: str, question: str, reference_field: str | None, modality: str | None = None,
          demo: bool = False, *, description: str) -> Task:
    return Task(
        name=name,
        description=description,
        benchmark="avhallubench",
        config="default",
        prompt=lambda row: question,
        media=CLIP,
        generation=ONE_BEST,
        samples=STOCHASTIC,
        parser="text",
        metric=None,
        scored_by=SCORED_BY,
        reference=(lambda row: row[reference_field]) if reference_field else None,
        source=SOURCE,
        evidence_modality=modality,
        demo=demo,
    )


# The visual and audio descriptions make the audio-visual pair of a ranking (each checked against both).
register_task(_task("avhallubench_visual", "Describe the video in one paragraph.", "visual_description", "visual",
                    demo=True, description="Describe what the video shows; models ranked by CrossCheck on it"))
register_task(_task("avhallubench_audio", "Describe the audio in one paragraph.", "audio_description", "audio",
                    description="Describe what the video's soundtrack holds; models ranked by CrossCheck on it"))
register_task(_task("avhallubench_speech", "What does the man/woman say in the video?", "audio_description",
                    description="Say what the person in the video says; models ranked by CrossCheck on it"))
