"""toy_agreement: the share of answers ("Yes.", "no") equal to the reference (an evaluate metric, importing nothing
from hallubench: it reads the raw answers itself); an answer that is neither yes nor no is counted, never scored."""
import datasets
import evaluate


class ToyAgreement(evaluate.Metric):
    fractions = ("agreement",)
    higher_is_better = {"agreement": True}

    @staticmethod
    def example_inputs(rng, n):
        return {"predictions": [rng.choice(["Yes.", "no", "maybe", ""]) for _ in range(n)],
                "references": [rng.choice(["yes", "no"]) for _ in range(n)]}

    def _info(self):
        return evaluate.MetricInfo(
            description=__doc__, citation="", inputs_description="predictions: the model's answers; references: yes or no",
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Value("string")}))

    def _compute(self, predictions, references):
        answers = [p.strip().lower().rstrip(".") for p in predictions]
        scored = [(a, r) for a, r in zip(answers, references) if a in ("yes", "no")]
        agreement = sum(p == r for p, r in scored) / len(scored) if scored else None
        return {"agreement": agreement, "n": len(predictions), "unparsed": len(predictions) - len(scored)}
