"""Mini SAC3: the four upstream files (same names, same item keys in the same order and value types).

Each item has 10 numbered perturbed questions, 10 self-sampled answers, 10 answers to the perturbed
questions and the judge strings ("Guess: Yes|No\\nProbability: p"). A judge string says "Yes" exactly
when its sample agrees with the answer under check (the hallucinated answer for prime/senator, the
generated answer for HotpotQA/NQ-open), so the scores follow from the texts. As in the real files,
list fields are JSON arrays. Prime questions use primes (so "not prime" is a hallucination), senator
questions fictional schools (so "yes, there was" is one).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hallubench.registry import register_mini_release

from .files import write_json

NUM_SAMPLES = 10
PROBABILITIES = ("1.0", "0.95", "0.9")

PRIME_TEMPLATES = (
    "Is the number {n} a prime?", "Can {n} be classified as a prime number?",
    "Does {n} belong to the set of prime numbers?", "Is {n} divisible only by 1 and itself?",
    "Does {n} have exactly two distinct positive divisors?", "Is {n} a prime integer?",
    "Would a mathematician call {n} prime?", "Is {n} free of divisors other than 1 and itself?",
    "Can {n} be divided evenly only by 1 and {n}?", "Is it true that {n} is prime?",
)
SENATOR_TEMPLATES = (
    "Did any US senator from {state} attend {school}?", "Has a US senator representing {state} graduated from {school}?",
    "Was any senator for {state} an alumnus of {school}?", "Did {school} ever produce a US senator for {state}?",
    "Has {state} been represented in the US Senate by a graduate of {school}?",
    "Is there a former US senator from {state} who studied at {school}?",
    "Did a {school} graduate ever serve as a US senator for {state}?",
    "Among the US senators of {state}, did any attend {school}?",
    "Has any alumnus of {school} represented {state} in the US Senate?",
    "Was {school} the alma mater of any US senator from {state}?",
)
QA_TEMPLATES = (
    "What is {t}?", "Can you tell me {t}?", "Do you know {t}?", "Please state {t}.", "I would like to know {t}.",
    "Could you name {t}?", "Tell me {t}, please.", "What would you say is {t}?", "Name {t}.", "Identify {t}.",
)


@dataclass(frozen=True)
class Probe:
    """One item: its leading fields (upstream order), 10 paraphrases, and how many samples agree with the checked answer."""

    fields: dict
    paraphrases: tuple[str, ...]
    agree: tuple[str, ...]
    disagree: tuple[str, ...]
    self_agree: int
    perb_agree: int

    def record(self) -> dict:
        self_flags = [i < self.self_agree for i in range(NUM_SAMPLES)]
        perb_flags = [i < self.perb_agree for i in range(NUM_SAMPLES)]
        return {
            **self.fields,
            "question_perturb": [f"{i}. {q}" for i, q in enumerate(self.paraphrases, 1)],
            "self_evaluations": self.answers(self_flags),
            "perb_evaluations": self.answers(perb_flags),
            "self_SC": [judge(flag, i) for i, flag in enumerate(self_flags)],
            "perb_SC": [judge(flag, i) for i, flag in enumerate(perb_flags)],
        }

    def answers(self, flags: list[bool]) -> list[str]:
        pools = [self.agree if flag else self.disagree for flag in flags]
        return [pool[i % len(pool)] for i, pool in enumerate(pools)]


def judge(agrees: bool, index: int) -> str:
    return f"Guess: {'Yes' if agrees else 'No'}\nProbability: {PROBABILITIES[index % len(PROBABILITIES)]}"


def prime(n: int, self_agree: int, perb_agree: int) -> Probe:
    return Probe({"question": f"Is {n} a prime number?", "hallucinated_answer": "No, it is not a prime number."},
                 tuple(t.format(n=n) for t in PRIME_TEMPLATES),
                 (f"No, {n} is not a prime number.", "No."), (f"Yes, {n} is a prime number.",),
                 self_agree, perb_agree)


def senator(state: str, school: str, self_agree: int, perb_agree: int) -> Probe:
    question = f"Was there ever a US senator that represented the state of {state} and whose alma mater was {school}?"
    return Probe({"question": question, "hallucinated_answer": "Yes, there was."},
                 tuple(t.format(state=state, school=school) for t in SENATOR_TEMPLATES),
                 (f"Yes, a US senator from {state} graduated from {school}.",),
                 (f"No, no US senator from {state} attended {school}.", f"I am not aware of any such senator from {state}."),
                 self_agree, perb_agree)


def qa(fields: dict, topic: str, agree: tuple[str, ...], disagree: tuple[str, ...], self_agree: int,
       perb_agree: int) -> Probe:
    return Probe(fields, tuple(t.format(t=topic) for t in QA_TEMPLATES), agree, disagree, self_agree, perb_agree)


RELEASE = {
    "prime-500-SC.json": [prime(7919, 7, 2), prime(1009, 9, 4), prime(3571, 5, 1)],
    "senator-500-SC.json": [senator("Vermont", "Miskatonic University", 6, 1),
                            senator("Wyoming", "Starfleet Academy", 8, 3),
                            senator("Oregon", "Hogwarts School of Witchcraft and Wizardry", 4, 0)],
    "hotpotQA_250_eval_labeled-SC.json": [
        qa({"knowledge": "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
                         "It was built as the entrance arch to the 1889 World's Fair.",
            "question": "In which city stands the tower that was built as the entrance arch to the 1889 World's Fair?",
            "right_answer": "Paris", "generated_answer": "The tower stands in Paris, France.", "label": "True",
            "hallucinated_answer": "The tower stands in Lyon, France."},
           "the city where the tower built for the 1889 World's Fair stands",
           ("It stands in Paris.", "The tower is in Paris, France."), ("It stands in Lyon.",), 10, 9),
        qa({"knowledge": "Mount Everest is Earth's highest mountain above sea level. It lies in the Himalayas, "
                         "on the border between Nepal and China.",
            "question": "Which two countries share the border on which Earth's highest mountain lies?",
            "right_answer": "Nepal and China", "generated_answer": "Nepal and China share it.", "label": "True",
            "hallucinated_answer": "India and Bhutan share it."},
           "the two countries on whose border Earth's highest mountain lies",
           ("Nepal and China.",), ("India and Bhutan.", "India and Nepal."), 9, 8),
        qa({"knowledge": "Jane Austen was an English novelist. Her novel Pride and Prejudice was published in 1813.",
            "question": "In what year was Pride and Prejudice, the novel by the English author Jane Austen, published?",
            "right_answer": "1813", "generated_answer": "Pride and Prejudice was published in 1831.", "label": "False",
            "hallucinated_answer": "It was published in 1790."},
           "the year Jane Austen's novel Pride and Prejudice was published",
           ("It was published in 1831.",), ("It was published in 1813.",), 4, 2),
    ],
    "nq_open_250_eval_labeled-SC.json": [
        qa({"question": "what is the capital of france", "right_answer": ["Paris"],
            "generated_answer": ["The capital of France is Paris."], "label": "True"},
           "the capital of France", ("The capital of France is Paris.", "Paris."), ("Lyon.",), 10, 10),
        qa({"question": "how many legs does a spider have", "right_answer": ["eight"],
            "generated_answer": ["A spider has eight legs."], "label": "True"},
           "the number of legs a spider has", ("A spider has eight legs.", "Eight."), ("Six.",), 10, 9),
        qa({"question": "who wrote the novel pride and prejudice", "right_answer": ["Jane Austen"],
            "generated_answer": ["Pride and Prejudice was written by Charlotte Brontë."], "label": "False"},
           "the author of the novel Pride and Prejudice",
           ("Charlotte Brontë wrote it.",), ("Jane Austen wrote it.", "It was written by Jane Austen."), 3, 1),
    ],
}


@register_mini_release("sac3")
def make(out: Path) -> Path:
    for name, probes in RELEASE.items():
        write_json(out / name, [probe.record() for probe in probes])
    return out
