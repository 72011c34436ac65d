"""toy_agreement: the share of answers ("Yes.", "no") equal to the reference (an evaluate metric, importing nothing
from hallubench: it reads the raw answers itself); an answer that is neither yes nor no is counted, never scored."""
import datasets
import evaluate


class ToyAgreement(evaluate.Metric):
    fractions = ("agreement",)
    higher_is_better = {"agreement": True}
    verdict_shares: dict = {}  # agreement leaves the unreadable answers out: no share of all items

    @staticmethod
    def item_verdicts(predictions, references):
        readings = [p.strip().lower().rstrip(".") for p in predictions]
        readings = [a if a in ("yes", "no") else None for a in readings]
        return [("unreadable" if a is None else "correct" if a == r else "wrong", a) for a, r in zip(readings, references)]

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
        verdicts = [verdict for verdict, _ in self.item_verdicts(predictions, references)]
        scored = [verdict == "correct" for verdict in verdicts if verdict != "unreadable"]
        agreement = sum(scored) / len(scored) if scored else None
        return {"agreement": agreement, "n": len(predictions), "unparsed": len(predictions) - len(scored)}
