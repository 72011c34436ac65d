"""The model families the `hf` adapter knows, as data: one `Family` per family, holding only what differs from
the generic path (the processor's chat template with text/image/video/audio parts, then one processor call and
`generate`), each difference with its reason and the model's documentation.

A checkpoint whose `model_type` no entry names still loads when transformers' auto mappings know it
(`auto_class_for`); the table adds quirks, the families' listing (`hallubench models`) and the record of what
is tested. Importing this module imports no torch or transformers (the CLI lists it at once).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hallubench.registry import MODEL_FAMILIES, register_family

DOCS = "https://huggingface.co/docs/transformers/model_doc/"
MEDIA = ("image", "video", "audio")
# How a VideoPart reaches the processor: "video" = the frames as one clip for the video processor, with
# do_sample_frames=False and a VideoMetadata(fps, frames_indices) (the processor resizes, never re-samples);
# "images" = the frames as a run of images, for families without a video processor whose docs feed frames so.
VIDEO_MODES = ("video", "images")
# Auto classes tried in this order for a model_type with no `auto_class` of its own, with their mapping in
# transformers.models.auto.modeling_auto (AutoModelForMultimodalLM exists from transformers 5.21 on).
AUTO_CLASSES = (("AutoModelForMultimodalLM", "MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES"),
                ("AutoModelForImageTextToText", "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES"),
                ("AutoModelForCausalLM", "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES"))
TEXT_AUTO_CLASS = "AutoModelForCausalLM"


@dataclass(frozen=True)
class Family:
    """One family: its `model_type`s, the media it takes, and what the generic path must do differently."""

    name: str
    model_types: tuple[str, ...]
    modalities: tuple[str, ...]  # media besides text (MEDIA); what a loaded model accepts still comes from its processor
    docs: str  # the model's documentation
    notes: str = ""  # the reason for each quirk below, and what is special
    auto_class: str | None = None  # transformers class to load with; None: the first of AUTO_CLASSES that maps it
    part: str | None = None  # config attribute of the part to load when present (a full Omni checkpoint's thinker)
    video: str = "video"  # VIDEO_MODES
    seconds_per_grid: str | None = None  # processor output: seconds per temporal patch, set from each clip's fps
    audio_in_video: bool = False  # takes a video's soundtrack interleaved with its frames (use_audio_in_video)
    pixel_budget: bool = False  # the processors' size is {shortest_edge: min pixels, longest_edge: max pixels}
    batch_by_media: bool = False  # its processor cannot take prompts with different media kinds in one call
    generate_kwargs: tuple[tuple[str, Any], ...] = ()  # extra flags every generate call of this family gets
    template_kwargs: tuple[tuple[str, Any], ...] = ()  # extra options of its chat template (apply_chat_template)
    remote_code: bool = False  # some released checkpoints need trust_remote_code=True (see notes)
    unsupported: str | None = None  # why the adapter refuses this family (loading says so, before any weights)
    tiny: str | None = None  # the tiny random checkpoint kind (hallubench.testing.tiny_checkpoints) its tests run
    untested: str | None = None  # why no tiny checkpoint tests it here (every family has `tiny` or a reason)
    min_transformers: str | None = None  # the oldest transformers it works with, when newer than setup.cfg's floor
    # Compiled decoding (static cache) on CUDA is on by default where transformers can compile the model whole;
    # False where tests/perf/check_gpu_paths.py found it failing or giving other answers (then it is off).
    compiled_decoding: bool | None = None

    def __post_init__(self) -> None:
        if self.video not in VIDEO_MODES:
            raise ValueError(f"family {self.name}: video must be one of {', '.join(VIDEO_MODES)}; got {self.video!r}")
        unknown = set(self.modalities) - set(MEDIA)
        if unknown:
            raise ValueError(f"family {self.name}: unknown modalities {sorted(unknown)}; choose from {', '.join(MEDIA)}")
        if (self.tiny is None) == (self.untested is None and self.unsupported is None):
            raise ValueError(f"family {self.name}: give either its tiny checkpoint kind or why it is untested")
        if self.video == "images" and not {"image", "video"} <= set(self.modalities):
            raise ValueError(f"family {self.name}: video='images' passes a video's frames as images; its modalities "
                             "must hold both")

    @property
    def arguments(self) -> tuple[str, ...]:
        """The `--model-args` of the hf adapter that only some families take, those this one takes."""
        return (("use_audio_in_video",) if self.audio_in_video else ()) + \
            (("min_pixels", "max_pixels") if self.pixel_budget else ())


def family_of(model_type: str) -> Family | None:
    return MODEL_FAMILIES.get(model_type)


def needs_newer_transformers(family: Family) -> str | None:
    """Why the installed transformers is too old for `family` (naming both versions), or None."""
    if family.min_transformers is None:
        return None
    from importlib.metadata import version

    from packaging.version import Version

    installed = version("transformers")
    if Version(installed) >= Version(family.min_transformers):
        return None
    return (f"{family.name} needs transformers>={family.min_transformers} (installed: {installed}); "
            f"pip install -U 'transformers>={family.min_transformers}'")


def families() -> list[Family]:
    """Every registered family once, in registration order."""
    return list({id(family): family for family in MODEL_FAMILIES.values()}.values())


def families_taking(argument: str) -> list[str]:
    return [family.name for family in families() if argument in family.arguments]


def auto_class_for(config: Any) -> str | None:
    """The transformers class that loads `config`'s checkpoint: the family's own, else the first auto mapping that
    knows its model_type, else the auto class a remote-code checkpoint declares in `auto_map`; None when none."""
    declared = getattr(config, "auto_map", None) or {}
    return auto_class_for_type(config.model_type) or next(
        (auto_class for auto_class, _ in AUTO_CLASSES if auto_class in declared), None)


def auto_class_for_type(model_type: str) -> str | None:
    """The family's own class for `model_type`, else the first of AUTO_CLASSES whose mapping has it (imports
    transformers' auto mappings, and with them torch: seconds)."""
    from transformers.models.auto import modeling_auto

    family = family_of(model_type)
    if family is not None and family.auto_class:
        return family.auto_class
    return next((auto_class for auto_class, mapping in AUTO_CLASSES
                 if model_type in getattr(modeling_auto, mapping, {})), None)


QWEN_VL_NOTE = ("min_pixels/max_pixels set the processors' pixel budget per image and per video frame "
                "(size={shortest_edge, longest_edge}, transformers 5.x; the older from_pretrained(min_pixels=) is ignored).")
TEXT_NOTE = ("Messages go to the template as plain strings (the released Llama 3 and Mistral templates take no list of "
             "parts); the rendered prompt is tokenized without adding special tokens (the templates write <bos> "
             "themselves). Without a chat template the prompt is the messages' bare text, as the papers' judges were run.")
NO_TINY = "no tiny checkpoint is built for it yet; it takes the generic path the tested families take"

for _family in (
    Family("Qwen2-VL", ("qwen2_vl",), ("image", "video"), DOCS + "qwen2_vl", QWEN_VL_NOTE,
           pixel_budget=True, tiny="qwen2_vl"),
    Family("Qwen2.5-VL", ("qwen2_5_vl",), ("image", "video"), DOCS + "qwen2_5_vl",
           "The time-aligned rotary positions need the seconds per temporal patch of each clip "
           "(second_per_grid_ts = temporal_patch_size / fps); the processor assumes one fps per call, so it is "
           "set per clip from the clip's own fps. " + QWEN_VL_NOTE,
           seconds_per_grid="second_per_grid_ts", pixel_budget=True, tiny="qwen2_5_vl"),
    Family("Qwen3-VL", ("qwen3_vl", "qwen3_vl_moe"), ("image", "video"), DOCS + "qwen3_vl",
           "The processor writes each frame's timestamp into the prompt from the VideoMetadata's fps and "
           "frames_indices, which the generic path passes (the clip's own fps, indices 0..T-1).", tiny="qwen3_vl"),
    Family("Qwen2.5-Omni (thinker)", ("qwen2_5_omni", "qwen2_5_omni_thinker"), ("image", "video", "audio"),
           DOCS + "qwen2_5_omni",
           "Text out only: a full checkpoint loads its thinker (the talker makes speech); transformers remaps "
           "the 'thinker.' weights. use_audio_in_video=True passes an AudioPart right after a VideoPart as that "
           "video's soundtrack (load_audio_from_video, interleaved 2-s chunks) and generate(use_audio_in_video=True). "
           "video_second_per_grid is set per clip from its fps. " + QWEN_VL_NOTE,
           auto_class="Qwen2_5OmniThinkerForConditionalGeneration", part="thinker_config",
           seconds_per_grid="video_second_per_grid", audio_in_video=True, pixel_budget=True, tiny="qwen2_5_omni"),
    Family("Qwen3-Omni (thinker)", ("qwen3_omni_moe", "qwen3_omni_moe_thinker"), ("image", "video", "audio"),
           DOCS + "qwen3_omni_moe",
           "As Qwen2.5-Omni: a full checkpoint loads its thinker; the soundtrack of a video is interleaved with "
           "use_audio_in_video=True. The processor computes video_second_per_grid from videos_kwargs fps, "
           "default 1.0, not from the metadata: it is set per clip from the clip's fps. The processor class "
           "defaults video frames to 128-768 x 32x32 px, above the saved config; " + QWEN_VL_NOTE,
           auto_class="Qwen3OmniMoeThinkerForConditionalGeneration", part="thinker_config",
           seconds_per_grid="video_second_per_grid", audio_in_video=True, pixel_budget=True, tiny="qwen3_omni"),
    Family("Qwen2-Audio", ("qwen2_audio",), ("audio",), DOCS + "qwen2_audio",
           "Audio is resampled to the feature extractor's rate (16 kHz).", tiny="qwen2_audio"),
    Family("LLaVA-OneVision", ("llava_onevision",), ("image", "video"), DOCS + "llava_onevision",
           tiny="llava_onevision"),
    Family("LLaVA-NeXT-Video", ("llava_next_video",), ("image", "video"), DOCS + "llava_next_video",
           "The video processor takes the frames given (no fps or timestamps used).", tiny="llava_next_video"),
    Family("Video-LLaVA", ("video_llava",), ("image", "video"), DOCS + "video_llava",
           "Trained on 8 frames per clip (LanguageBind): run it with --num-frames 8.", tiny="video_llava"),
    Family("VideoLLaMA3", ("video_llama_3",), ("image", "video"), DOCS + "video_llama_3",
           "The DAMO-NLP-SG/VideoLLaMA3-* checkpoints are remote code (videollama3_qwen2); the transformers "
           "port loads the *-HF conversions.", remote_code=True, tiny="video_llama_3"),
    Family("LLaVA / LLaVA-NeXT", ("llava", "llava_next"), ("image",), DOCS + "llava",
           "Image only: one image per prompt as trained; no video processor.", tiny="llava"),
    Family("InternVL", ("internvl",), ("image", "video"), DOCS + "internvl",
           "The transformers port loads the OpenGVLab/InternVL*-hf checkpoints; the original ones are remote code "
           "(internvl_chat).", remote_code=True, tiny="internvl"),
    Family("SmolVLM", ("smolvlm",), ("image", "video"), DOCS + "smolvlm",
           "The processor needs the num2words package. It writes the frames' times into the prompt from the "
           "VideoMetadata; with a video it uses its own default chat template. Images and videos both become "
           "pixel_values in transformers 5.23, so they cannot share a call: prompts with other media kinds go "
           "to separate generate calls, and an image and a video in one prompt fail. Before transformers 5.23 "
           "(5.18 to 5.22.0 tried) its processor miscounts a prompt's videos (\"videos in the text [1] and videos "
           "[4]\").",
           batch_by_media=True, tiny="smolvlm", min_transformers="5.23"),
    Family("Idefics3", ("idefics3",), ("image", "video"), DOCS + "idefics3",
           "No video processor: a video's frames go in as a run of images.", video="images", tiny="idefics3"),
    Family("Gemma 3", ("gemma3",), ("image", "video"), DOCS + "gemma3",
           "Images interleave with text; no video processor, so a video's frames go in as a run of images. The "
           "template writes <bos> itself (the prompt is tokenized without special tokens); the processor's "
           "token_type_ids reach generate (bidirectional attention over images). gemma3_text (1B) is a text LM.",
           video="images", tiny="gemma3"),
    Family("Gemma 3n", ("gemma3n",), ("image", "video", "audio"), DOCS + "gemma3n",
           "Audio at the feature extractor's 16 kHz, each clip 188 tokens (about 30 s); no video processor, so a "
           "video's frames go in as a run of images. The vision tower needs the timm package. The template writes "
           "<bos> itself.", video="images", tiny="gemma3n"),
    Family("Phi-4-multimodal", ("phi4_multimodal",), ("image", "audio"), DOCS + "phi4_multimodal",
           "The processor's audio part is `audio_processor` (not feature_extractor); AutoProcessor drops the chat "
           "template in transformers 5.23, so the tokenizer's is used. The microsoft/Phi-4-multimodal-instruct main "
           "branch is remote code (phi4mm); the transformers port loads revision=refs/pr/70, as its documentation "
           "shows. CAUTION: the released model also needs its vision/speech LoRA adapters (peft, one per modality), "
           "which the adapter does not load: answers come from the base weights.", remote_code=True,
           tiny="phi4_multimodal"),
    Family("Granite Speech", ("granite_speech",), ("audio",), DOCS + "granite_speech",
           "The processor's audio part is `audio_processor` (not feature_extractor); its feature extractor needs "
           "torchaudio. The released models apply a LoRA adapter to audio prompts (peft), which the adapter does "
           "not load.",
           untested="its feature extractor needs torchaudio, whose releases pin an older torch than hallubench's "
                    "(torchaudio 2.11 wants torch 2.11); the tiny zoo builds one, and its tests skip without "
                    "torchaudio"),
    Family("Audio Flamingo 3", ("audioflamingo3",), ("audio",), DOCS + "audioflamingo3",
           "A decoder-only LM with an audio tower that transformers maps under AutoModelForSeq2SeqLM only. The "
           "processor takes exactly one audio per prompt: one clip per question, and prompts without audio go to "
           "separate generate calls.",
           auto_class="AutoModelForSeq2SeqLM", batch_by_media=True, tiny="audioflamingo3"),
    Family("Voxtral", ("voxtral",), ("audio",), DOCS + "voxtral",
           unsupported="Voxtral's processor takes audio only through apply_chat_template(tokenize=True) with the "
                       "mistral-common tokenizer, and refuses audio placeholders in text; the generic path renders "
                       "the template to text first. Serve it with vLLM and use --model openai. (Not tested here "
                       "either: mistral-common wants numpy < 2.4, below hallubench's.)"),
    Family("Mistral 3 / Pixtral", ("mistral3",), ("image",), DOCS + "mistral3", untested=NO_TINY),
    Family("GLM-4.1V", ("glm4v",), ("image", "video"), DOCS + "glm4v", untested=NO_TINY),
    Family("Llama (text)", ("llama",), (), DOCS + "llama", "Any Llama causal LM (1, 2, 3). " + TEXT_NOTE,
           auto_class=TEXT_AUTO_CLASS, tiny="llama3"),
    Family("Mistral (text)", ("mistral",), (), DOCS + "mistral", TEXT_NOTE, auto_class=TEXT_AUTO_CLASS,
           tiny="mistral"),
    Family("Qwen2 / Qwen2.5 (text)", ("qwen2",), (), DOCS + "qwen2", TEXT_NOTE, auto_class=TEXT_AUTO_CLASS,
           tiny="qwen2"),
    Family("Qwen3 (text)", ("qwen3", "qwen3_moe"), (), DOCS + "qwen3",
           "The released chat template thinks aloud (<think> ...) unless enable_thinking=False; answers are read "
           "from their first words (yes/no, an option), so the non-thinking mode is asked for. " + TEXT_NOTE,
           auto_class=TEXT_AUTO_CLASS, template_kwargs=(("enable_thinking", False),), tiny="qwen3"),
    Family("Other text LMs (Gemma, Phi)", ("gemma", "gemma2", "gemma3_text", "phi3"), (),
           DOCS + "auto#transformers.AutoModelForCausalLM",
           "Any text-only causal LM loads (AutoModelForCausalLM); these are some more. " + TEXT_NOTE,
           auto_class=TEXT_AUTO_CLASS, untested=NO_TINY),
):
    register_family(_family)
