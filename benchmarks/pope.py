"""POPE (Li et al. 2023, EMNLP, arXiv:2305.10355): yes/no object probes on COCO val2014, three negative samplings.

Prompt: the released question verbatim ("Is there a <object> in the image?", main.py's default `--template` in
github.com/AoiDragon/POPE @ 08d957b); the paper adds no instruction. The authors fix no generation length;
greedy decoding and up to 128 new tokens follow lmms-eval's port (lmms_eval/tasks/pope/pope_random.yaml). The
answer rule and the numbers are those of the authors' evaluate.py (the `pope` metric: an answer is "no" when its
first sentence holds the word "No", "no" or "not", otherwise "yes"); the `pope_answer` parser logs that reading
where the answer states it and marks answers saying neither as unparsed, so `n_unparsed` counts what the
authors' rule silently reads as "yes". Groups: the setting (random / popular / adversarial), as the paper's
Table 3 reports each; the task's overall numbers pool the three settings.

`pope` is the COCO part (the one lmms-lab/POPE holds and CrossCheckGPT ranks with); `pope_random`, `pope_popular`
and `pope_adversarial` one setting of it each (as lmms-eval splits it); `pope_aokvqa` and `pope_gqa` the SEEM-built
sets of the release.
"""
import dataclasses

from hallubench.benchmarks.task import MediaSpec, Task, one_of, yes_no
from hallubench.models.protocol import GenerationSettings
from hallubench.registry import register_parser, register_task


@register_parser("pope_answer")
def pope_answer(text: str) -> str | None:
    """The `pope` metric's reading (`parse_pope`): "yes"/"no" as the authors read it, None when it says neither."""
    from hallubench.metrics.pope.pope import parse_pope

    return parse_pope(text)


def pope_task(name: str, config: str, description: str) -> Task:
    return Task(
        name=name,
        description=description,
        benchmark="pope",
        config=config,
        prompt=lambda row: row["question"],
        media=MediaSpec(image="image"),
        generation=GenerationSettings(max_new_tokens=128, temperature=0.0),
        parser="pope_answer",
        metric="pope",
        reference=lambda row: one_of(row, "answer", ("yes", "no"), yes_no),
        group=lambda row: row["setting"],
        # yes_ratio is best at the references' share (0.5 in POPE), so neither direction is better.
        higher_is_better={"accuracy": True, "precision": True, "recall": True, "f1": True, "yes_ratio": None},
        source="Li et al. 2023, arXiv:2305.10355 §4; github.com/AoiDragon/POPE @ 08d957b evaluate.py",
    )


POPE = pope_task("pope", "coco", "POPE on COCO: is this object in the image? All three ways of picking absent objects")
SETTINGS = {"random": "absent objects picked at random", "popular": "absent objects among COCO's most frequent",
            "adversarial": "absent objects that often co-occur with present ones"}
register_task(POPE)
for _setting in ("random", "popular", "adversarial"):
    register_task(dataclasses.replace(POPE, name=f"pope_{_setting}", description=f"POPE on COCO, {SETTINGS[_setting]}",
                                      exclude=lambda row, setting=_setting: row["setting"] != setting))
register_task(pope_task("pope_aokvqa", "aokvqa", "POPE's object probes on A-OKVQA images"))
register_task(pope_task("pope_gqa", "gqa", "POPE's object probes on GQA images"))
