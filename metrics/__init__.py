"""The hallubench metrics, one evaluate module per folder: metrics/<name>/<name>.py with its card README.md.

Loading by bare name. `evaluate.load("<name>")` (evaluate 0.4.6, `evaluation_module_factory`) tries
1. ./<name>/<name>.py relative to the working directory;
2. the Hub Spaces evaluate-metric/<name>, evaluate-comparison/<name>, evaluate-measurement/<name>;
3. when step 2 fails, the newest cached copy of such a canonical module,
   $HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--<name>/<64-hex hash>/<name>.py
   (default HF_MODULES_CACHE ~/.cache/huggingface/modules; every folder on the way holds __init__.py).
`install.install` writes exactly that copy for every packaged metric, so step 3 finds it. Importing this
package (and so every `hallubench` command) runs `install.ensure_installed`, which installs only when the
cached copies are not this hallubench's (a content-hash check on five small files, no evaluate import):
after `pip install hallubench` or an upgrade, the first use makes bare names work in that HF_HOME.
`hallubench metrics install` does the same explicitly, e.g. into another --modules-cache. Online, step 2 finds no such Space (a 404, or a 401 when anonymous; either ends in
step 3), so the installed copy still answers.

Without network, step 2 costs whatever the network makes it cost, once per namespace (three times): a
download-count HEAD to S3 (timeout 10 s; HF_UPDATE_DOWNLOAD_COUNTS=0 skips it) and a HEAD for the
script on the Hub (timeout etag_timeout=100 s). Measured load times, module already installed: DNS
failing at once ~1.5 s (a 0.5 s retry back-off per namespace); a proxy that accepts connections and never
answers 334 s (= 3 x (10 s + 100 s)). evaluate 0.4.6 ignores HF_HUB_OFFLINE (same 1.5 s);
HF_EVALUATE_OFFLINE=1 skips step 2 entirely (0.02-0.1 s), so set it on machines without network.

`hallubench metrics push --namespace ORG` publishes the metrics as evaluate Spaces ORG/<name>, which
`evaluate.load("ORG/<name>")` loads online as it does any community metric (`install.layout_space`,
`install.push`).
"""
from hallubench.metrics.install import available, ensure_installed
from hallubench.registry import register_metric

# evaluate loads a metric script as a stand-alone file, so a metric cannot register itself by decorator:
# its folder <name>/<name>.py is its registration, made here when the package is imported.
for _script in available().values():
    register_metric(_script)

ensure_installed()
