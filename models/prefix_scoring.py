"""First-token probabilities of many text prompts that share long prefixes, each prefix computed once.

The LLM judge's prompts put the evidence passage first and the sentence last, and the judgment cache
sends the pairs of one passage together, so a passage's ~400 tokens recur in every prompt that checks a
sentence against it. Here the prompts (token ids) are sorted, runs sharing at least half of their tokens
are grouped, each group's shared prefix goes through the model once, and its key/value cache is repeated
for the group's suffixes (right-padded: a causal model's real tokens never see the pads after them; the
logits are read at each suffix's last real token). Several groups share a batch: their prefixes go
through together, left-padded, and each suffix is attached to its own group's cache row, so a batch of
`batch_size` prompts costs two forward passes (a group larger than `batch_size` keeps its one prefix pass). Prompts that share nothing are batched as whole prompts.
The probabilities are those of whole-prompt forward passes up to floating-point rounding.
"""
from __future__ import annotations

import copy
from typing import Any

import torch

MIN_SHARED_TOKENS = 16
MIN_SHARED_FRACTION = 0.5  # of the shorter prompt: a shared chat-template header alone is not worth a group


def _common_length(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def prefix_groups(prompts: list[list[int]]) -> list[tuple[int, list[int]]]:
    """(shared prefix length, prompt indices) groups covering every prompt once; the prefix leaves each
    member at least one token of its own. The prompts that share no prefix make one last group, prefix 0."""
    order = sorted(range(len(prompts)), key=lambda i: prompts[i])
    groups: list[tuple[int, list[int]]] = []
    for index in order:
        if groups:
            shared, members = groups[-1]
            first = prompts[members[0]]
            common = _common_length(first, prompts[index])
            candidate = min(common, shared) if len(members) > 1 else common
            shortest = min(len(prompts[m]) for m in (*members, index))
            candidate = min(candidate, shortest - 1)
            if candidate >= max(MIN_SHARED_TOKENS, MIN_SHARED_FRACTION * shortest):
                groups[-1] = (candidate, members + [index])
                continue
        groups.append((0, [index]))
    # Prompts that share no prefix go through together, shortest first (the least padding).
    alone = sorted((members[0] for shared, members in groups if len(members) == 1), key=lambda i: len(prompts[i]))
    return [group for group in groups if len(group[1]) > 1] + ([(0, alone)] if alone else [])


def _batches(groups: list[tuple[int, list[int]]], batch_size: int) -> list[list[tuple[int, list[int]]]]:
    """Whole groups packed into batches of at most `batch_size` prompts (a larger group is a batch of its own,
    its suffixes then run `batch_size` at a time on its one prefix); groups without a shared prefix are batched
    apart (they need no prefix pass)."""
    batches: list[list[tuple[int, list[int]]]] = []
    for shared_kind in (True, False):
        current: list[tuple[int, list[int]]] = []
        for group in (g for g in groups if bool(g[0]) == shared_kind):
            if current and sum(len(m) for _, m in current) + len(group[1]) > batch_size:
                batches.append(current)
                current = []
            current.append(group)
        if current:
            batches.append(current)
    return batches


@torch.inference_mode()
def _prefix_pass(model: Any, prompts: list[list[int]], batch: list[tuple[int, list[int]]],
                 pad_id: int) -> tuple[Any, torch.Tensor]:
    """The key/value cache of the groups' prefixes, left-padded into one pass (None when none is shared), and
    their attention mask."""
    device = model.device
    width = max(shared for shared, _ in batch)
    prefix_mask = torch.zeros((len(batch), width), dtype=torch.long, device=device)
    past = None
    if width:
        prefix = torch.full((len(batch), width), pad_id, device=device)
        for row, (shared, members) in enumerate(batch):
            prefix[row, width - shared:] = torch.tensor(prompts[members[0]][:shared], device=device)
            prefix_mask[row, width - shared:] = 1
        positions = (prefix_mask.cumsum(-1) - 1).clamp(min=0)
        past = model(input_ids=prefix, attention_mask=prefix_mask, position_ids=positions, use_cache=True,
                     logits_to_keep=1).past_key_values
    return past, prefix_mask


@torch.inference_mode()
def _suffix_logits(model: Any, suffixes: list[tuple[int, list[int]]], owner: torch.Tensor, prefix: Any,
                   prefix_mask: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Next-token logits of each (shared length, suffix), right-padded, on its group's row (`owner`) of the
    prefix cache."""
    device = model.device
    length = max(len(suffix) for _, suffix in suffixes)
    ids = torch.full((len(suffixes), length), pad_id, device=device)
    mask = torch.zeros((len(suffixes), length), dtype=torch.long, device=device)
    positions = torch.zeros((len(suffixes), length), dtype=torch.long, device=device)
    for row, (shared, suffix) in enumerate(suffixes):
        ids[row, :len(suffix)] = torch.tensor(suffix, device=device)
        mask[row, :len(suffix)] = 1
        positions[row] = shared + torch.arange(length, device=device)
    past = None
    if prefix is not None:
        past = copy.deepcopy(prefix)  # selecting rows changes a cache in place; the prefix serves every chunk
        past.batch_select_indices(owner)
        mask = torch.cat([prefix_mask[owner], mask], dim=1)
    last = torch.tensor([len(suffix) - 1 for _, suffix in suffixes], device=device)
    keep = torch.unique(last)
    logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=past,
                   use_cache=past is not None, logits_to_keep=keep).logits
    return logits[torch.arange(len(suffixes), device=device), torch.searchsorted(keep, last)]


def first_token_probs(model: Any, prompts: list[list[int]], word_ids: list[list[int]], batch_size: int,
                      pad_id: int, counts: dict[str, int] | None = None) -> list[list[float]]:
    """Per prompt (token ids), the summed probability of each entry of `word_ids` as the next token. `counts`, when
    given, adds up `prompts`, `prompt_tokens` (what whole-prompt passes would forward) and `forwarded_tokens`
    (the real tokens forwarded here: each group's prefix once, plus every suffix)."""
    out: list[list[float] | None] = [None] * len(prompts)
    groups = prefix_groups(prompts)
    if counts is not None:
        counts["prompts"] = counts.get("prompts", 0) + len(prompts)
        counts["prompt_tokens"] = counts.get("prompt_tokens", 0) + sum(map(len, prompts))
        counts["forwarded_tokens"] = counts.get("forwarded_tokens", 0) + sum(
            shared + sum(len(prompts[i]) - shared for i in members) for shared, members in groups)
    for batch in _batches(groups, batch_size):
        prefix, prefix_mask = _prefix_pass(model, prompts, batch, pad_id)
        rows = [(row, shared, i) for row, (shared, members) in enumerate(batch) for i in members]
        for start in range(0, len(rows), batch_size):
            chunk = rows[start:start + batch_size]
            owner = torch.tensor([row for row, _, _ in chunk], device=model.device)
            logits = _suffix_logits(model, [(shared, prompts[i][shared:]) for _, shared, i in chunk], owner, prefix,
                                    prefix_mask, pad_id)
            probs = torch.softmax(logits.float(), dim=-1)
            for row, (_, _, i) in enumerate(chunk):
                out[i] = [probs[row, ids].sum().item() for ids in word_ids]
    return out  # type: ignore[return-value]
