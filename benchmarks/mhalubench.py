"""MHaluBench image-to-text (Chen et al. 2024, UniHD; used by CrossCheckGPT): captioning of its images.

The model describes each image; the benchmark's annotated responses come from other systems, so the
new captions are ranked by cross-checking across run folders (metrics/crosscheck), not inside one run.
MHaluBench publishes no captioning prompt of its own; this task asks the AVHalluBench question with
"image" for "video" so the visual tasks stay comparable. Items whose image the release lacks are
recorded as media errors.
"""
from hallubench.benchmarks.task import MediaSpec, Task
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_task

PROMPT = "Describe the image in one paragraph."

register_task(
    Task(
        name="mhalubench",
        benchmark="mhalubench",
        config="default",
        prompt=lambda row: PROMPT,
        media=MediaSpec(image="image"),
        generation=GenerationSettings(max_new_tokens=256),
        samples=GenerationSettings(max_new_tokens=256, temperature=1.0, top_p=0.9, n=10),
        parser="text",
        metric=None,
        scored_by="crosscheck over the run folders of several models (hallubench.metrics.crosscheck)",
        source="Chen et al. 2024, arXiv:2402.03190; github.com/BriansIDP/crosscheckgpt data/VisualImage",
    ),
)
