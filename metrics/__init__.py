"""The hallubench metrics, one evaluate module per folder: metrics/<name>/<name>.py with its card README.md.

Loading by bare name. `evaluate.load("<name>")` (evaluate 0.4.6, `evaluation_module_factory`) tries
1. ./<name>/<name>.py relative to the working directory;
2. the Hub Spaces evaluate-metric/<name>, evaluate-comparison/<name>, evaluate-measurement/<name>;
3. when step 2 fails, the newest cached copy of such a canonical module,
   $HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--<name>/<64-hex hash>/<name>.py
   (default HF_MODULES_CACHE ~/.cache/huggingface/modules; every folder on the way holds __init__.py).
`hallubench metrics install` (`install.install`) writes exactly that copy for every packaged metric, so
step 3 finds it. Online, step 2 finds no such Space (404) and step 3 still answers.

Without network, step 2 costs whatever the network makes it cost, three times (once per namespace): a
download-count HEAD to S3 (10 s timeout) and a HEAD for the script on the Hub (etag_timeout 100 s, no
retry on a read timeout). When DNS fails at once that is ~1.5 s (0.5 s back-off per namespace); behind a
proxy or firewall that swallows connections it measured 334 s. evaluate ignores HF_HUB_OFFLINE;
HF_EVALUATE_OFFLINE=1 skips step 2 entirely (load in ~0.1 s), so set it on offline machines.

`hallubench metrics push <name> --repo <space>` publishes a metric as an evaluate Space instead
(`install.layout_space`, `install.push`).
"""
