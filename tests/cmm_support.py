"""The CMM release's scorer (DAMO-NLP-SG/CMM `evaluation/calculate_score.py`), re-implemented from its
published code so tests can check our headline numbers against it."""
import json

GRANULARITIES = ("object-level", "event-level")


def cmm_calculate_score(lines):
    """DAMO-NLP-SG/CMM evaluation/calculate_score.py, its overall and per-sub_category / per-(granularity,
    sub_category) tables, reading JSON lines with answer, pred, sub_category, granularity."""

    def tally(samples):
        total = correct = total_yes = correct_yes = total_no = correct_no = 0
        for sample in samples:
            answer = sample["answer"].strip().lower()
            prediction = sample["pred"].strip().lower()
            total += 1
            if answer in prediction[:5]:
                correct += 1
            if "yes" in answer[:5]:
                total_yes += 1
                if "yes" in prediction[:5]:
                    correct_yes += 1
            elif "no" in answer[:5]:
                total_no += 1
                if "no" in prediction[:5]:
                    correct_no += 1
        return (correct_yes / total_yes if total_yes > 0 else 0, correct_no / total_no if total_no > 0 else 0,
                correct / total if total > 0 else 0)

    samples = [json.loads(line) for line in lines]
    by_sub = {s["sub_category"]: tally([x for x in samples if x["sub_category"] == s["sub_category"]]) for s in samples}
    # The release skips a granularity other than these two.
    by_gran = {
        (s["granularity"], s["sub_category"]): tally(
            [x for x in samples if (x["granularity"], x["sub_category"]) == (s["granularity"], s["sub_category"])]
        )
        for s in samples if s["granularity"] in GRANULARITIES
    }
    return tally(samples), by_sub, by_gran
