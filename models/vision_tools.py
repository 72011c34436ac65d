"""Vision tools behind the chat interface, for multi-step tasks whose steps call tools (UniHD, benchmarks/unihd.py):
`--helper ROLE adapter=grounding_dino,...` or `adapter=scene_text,...`. Each conversation is one tool call: its image is
the image, its last user text the query; the output is one line per finding, "<phrase> [x1, y1, x2, y2]" with the box
normalised to [0, 1] and rounded to 3 decimals (EasyDetect pipeline/tool/detect.py, github.com/zjunlp/EasyDetect @
ad519a2), "" when nothing is found. Tools are deterministic: settings and seeds do not change what they find.

- `grounding_dino`: open-set object detection with Grounding DINO through transformers (AutoModelForZeroShotObject-
  Detection and its processor's post-processing, as the model's documentation does it; transformers'
  "zero-shot-object-detection" pipeline scores one label per query, while UniHD sends all objects as one
  period-separated caption, "man.motorcycle"). Thresholds: EasyDetect config.yaml's BOX_TRESHOLD 0.35,
  TEXT_TRESHOLD 0.25. The paper's checkpoint is groundingdino_swint_ogc (IDEA-Research/grounding-dino-tiny on the Hub).
- `scene_text`: UniHD's scene-text tool (tool_execute.py `get_ocr_res`): Grounding DINO finds text regions with the
  caption "word.number" (box 0.2, text 0.25), regions under 0.1% of the image are dropped (AREA_THRESHOLD 0.001), and a
  text recognition model reads each crop. The paper's recogniser is MAERec (mmocr, not a transformers model); ours is
  a transformers image-to-text OCR model, by default TrOCR fine-tuned for scene text recognition
  (microsoft/trocr-base-str: the same job as MAERec, reading one cropped word, trained on the scene-text benchmarks).
  Each read is paired with its own box (EasyDetect pairs the reads of the kept crops with all boxes in order).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hallubench.config import AtLeastOne, Benign, Fraction, NameOrPath, PluginConfig
from hallubench.models.protocol import Conversation, GenerationSettings, ImagePart, TextPart
from hallubench.registry import register_model


@dataclass(frozen=True)
class GroundingDinoArgs(PluginConfig):
    model: NameOrPath[str]  # a Grounding DINO checkpoint (Hub id or folder)
    revision: Benign[str | None] = None
    device: Benign[str] = "cpu"
    box_threshold: Fraction[float] = 0.35
    text_threshold: Fraction[float] = 0.25


@dataclass(frozen=True)
class SceneTextArgs(PluginConfig):
    model: NameOrPath[str]  # a transformers OCR checkpoint reading one cropped word (VisionEncoderDecoder, e.g. TrOCR)
    detector: NameOrPath[str] = "IDEA-Research/grounding-dino-tiny"
    revision: Benign[str | None] = None
    device: Benign[str] = "cpu"
    caption: Benign[str] = "word.number"  # the detector's text prompt
    box_threshold: Fraction[float] = 0.2
    text_threshold: Fraction[float] = 0.25
    area_threshold: Fraction[float] = 0.001
    max_new_tokens: AtLeastOne[int] = 32


def image_and_query(conversation: Conversation) -> tuple[Any, str]:
    """The conversation's first image and its last user text; ValueError when it has no image."""
    parts = [part for message in conversation for part in message.content]
    images = [part.image for part in parts if isinstance(part, ImagePart)]
    texts = [part.text for part in parts if isinstance(part, TextPart)]
    if not images:
        raise ValueError("a vision tool needs an image in the conversation")
    return images[0].convert("RGB"), texts[-1] if texts else ""


def box_line(phrase: str, box: list[float]) -> str:
    """EasyDetect's line: the phrase and its normalised box."""
    return f"{phrase} {box}"


class GroundingDino:
    """Open-set object detection: finds the caption's phrases in the image."""

    accepts = frozenset({"image"})

    def __init__(self, model: str, revision: str | None = None, device: str = "cpu", box_threshold: float = 0.35,
                 text_threshold: float = 0.25):
        from transformers import AutoModelForZeroShotObjectDetection, AutoProcessor

        from hallubench.models.hf_loading import refusing_pickled_code

        self.processor = AutoProcessor.from_pretrained(model, revision=revision)
        with refusing_pickled_code(model):
            self.model = AutoModelForZeroShotObjectDetection.from_pretrained(model, revision=revision).to(device).eval()
        self.device, self.box_threshold, self.text_threshold = device, box_threshold, text_threshold
        self.name = f"grounding_dino:{model}"
        self.fingerprint = f"grounding_dino:{model}@{revision or 'main'}:{box_threshold}:{text_threshold}"

    def detect(self, image, caption: str, box_threshold: float, text_threshold: float) -> list[tuple[str, list[float]]]:
        """(phrase, normalised box) per detection of the caption's phrases."""
        import torch

        text = caption.strip().lower()
        text = text if text.endswith(".") else text + "."  # Grounding DINO's caption form (its load_image/predict)
        inputs = self.processor(images=image, text=text, return_tensors="pt").to(self.device)
        with torch.no_grad():
            outputs = self.model(**inputs)
        width, height = image.size
        found = self.processor.post_process_grounded_object_detection(
            outputs, inputs["input_ids"], threshold=box_threshold, text_threshold=text_threshold,
            target_sizes=[(height, width)])[0]
        scale = torch.tensor([width, height, width, height], dtype=torch.float32)
        boxes = (found["boxes"].float().cpu() / scale).clamp(0, 1)
        return [(phrase, [round(v, 3) for v in box.tolist()]) for phrase, box in zip(found["text_labels"], boxes)]

    def generate(self, conversations: list[Conversation], settings: GenerationSettings,
                 seeds: list[int] | None = None) -> list[list[str]]:
        outputs = []
        for conversation in conversations:
            image, caption = image_and_query(conversation)
            lines = [box_line(phrase, box) for phrase, box in
                     self.detect(image, caption, self.box_threshold, self.text_threshold)]
            outputs.append(["\n".join(lines)] * settings.n)
        return outputs


class SceneTextReader:
    """Scene text: Grounding DINO finds text regions, an OCR model reads each."""

    accepts = frozenset({"image"})

    def __init__(self, model: str, detector: str = "IDEA-Research/grounding-dino-tiny", revision: str | None = None,
                 device: str = "cpu", caption: str = "word.number", box_threshold: float = 0.2,
                 text_threshold: float = 0.25, area_threshold: float = 0.001, max_new_tokens: int = 32):
        from transformers import AutoModelForImageTextToText, AutoProcessor

        from hallubench.models.hf_loading import refusing_pickled_code

        self.detector = GroundingDino(detector, device=device)
        self.processor = AutoProcessor.from_pretrained(model, revision=revision)
        with refusing_pickled_code(model):
            self.model = AutoModelForImageTextToText.from_pretrained(model, revision=revision).to(device).eval()
        self.device, self.caption, self.max_new_tokens = device, caption, max_new_tokens
        self.box_threshold, self.text_threshold, self.area_threshold = box_threshold, text_threshold, area_threshold
        self.name = f"scene_text:{model}"
        self.fingerprint = (f"scene_text:{model}@{revision or 'main'}+{self.detector.fingerprint}:{caption}:"
                            f"{box_threshold}:{text_threshold}:{area_threshold}:{max_new_tokens}")

    def read(self, crops: list) -> list[str]:
        import torch

        pixels = self.processor(images=crops, return_tensors="pt").pixel_values.to(self.device)
        with torch.no_grad():
            ids = self.model.generate(pixels, max_new_tokens=self.max_new_tokens, do_sample=False)
        return [text.strip() for text in self.processor.batch_decode(ids, skip_special_tokens=True)]

    def generate(self, conversations: list[Conversation], settings: GenerationSettings,
                 seeds: list[int] | None = None) -> list[list[str]]:
        outputs = []
        for conversation in conversations:
            image, _ = image_and_query(conversation)
            width, height = image.size
            boxes = [box for _, box in self.detector.detect(image, self.caption, self.box_threshold,
                                                            self.text_threshold)
                     if (box[2] - box[0]) * (box[3] - box[1]) >= self.area_threshold]
            crops = [image.crop((x1 * width, y1 * height, x2 * width, y2 * height)) for x1, y1, x2, y2 in boxes]
            reads = self.read(crops) if crops else []
            outputs.append(["\n".join(box_line(text, box) for text, box in zip(reads, boxes))] * settings.n)
        return outputs


@register_model("grounding_dino", config=GroundingDinoArgs, role="tool")
def _grounding_dino(**args: Any) -> GroundingDino:
    return GroundingDino(**args)


@register_model("scene_text", config=SceneTextArgs, role="tool")
def _scene_text(**args: Any) -> SceneTextReader:
    return SceneTextReader(**args)
