#!/usr/bin/env python3
"""Held-out score of the extractor's option choice, split by site.

usage: heldout.py SCORER GROUND_TRUTH GRID_DIR DEFAULT_KEY [FOLDS]

GRID_DIR holds one prediction file per option set (heldout.mjs). Pages are
grouped by the host of their URL, and hosts are dealt into FOLDS folds
(default 5) by a hash of the host name, so no site is on both sides. For
each fold, the option set with the best F1 on the other folds is chosen and
its predictions for this fold's pages are kept; the kept predictions of all
folds are then scored together. That figure never saw its own pages when
the choice was made. Prints it with the full-corpus F1 of every option set
(the default marked). The metric is SCORER's (eval_extraction.py).
"""
import hashlib
import importlib.util
import os
import sys
from urllib.parse import urlparse


def load_scorer(path):
    spec = importlib.util.spec_from_file_location("eval_extraction", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fold_of(host, folds):
    return int(hashlib.sha256(host.encode()).hexdigest(), 16) % folds


def main(argv):
    if len(argv) < 5:
        print(__doc__)
        return 2
    scorer = load_scorer(argv[1])
    truth = scorer.load(argv[2])
    grid_dir, default = argv[3], argv[4]
    folds = int(argv[5]) if len(argv) > 5 else 5
    grid = {
        name[: -len(".json")]: scorer.load(os.path.join(grid_dir, name))
        for name in sorted(os.listdir(grid_dir))
        if name.endswith(".json")
    }
    if default not in grid:
        print(f"default option set {default} is not in {grid_dir}")
        return 2
    fold = {k: fold_of(urlparse(v.get("url", "")).netloc or k, folds) for k, v in truth.items()}
    kept = {}
    print(f"{'fold':<6}{'pages':>6}  {'chosen on the other folds':<28}{'F1 here':>8}")
    for f in range(folds):
        train = {k: v for k, v in truth.items() if fold[k] != f}
        test = {k: v for k, v in truth.items() if fold[k] == f}
        if not test:
            continue
        # Ties go to the default: another value must do better to be chosen.
        best = max(sorted(grid), key=lambda name: (scorer.score(train, grid[name])[0], name == default))
        kept.update({k: grid[best].get(k, {}) for k in test})
        print(f"{f:<6}{len(test):>6}  {best:<28}{scorer.score(test, grid[best])[0]:>8.3f}")
    print()
    print(f"{'option set':<28}{'F1':>7}{'prec':>7}{'recall':>7}   full corpus, pages={len(truth)}")
    for name in sorted(grid):
        f1, p, r = scorer.score(truth, grid[name])
        mark = "  (default)" if name == default else ""
        print(f"{name:<28}{f1:7.3f}{p:7.3f}{r:7.3f}{mark}")
    f1, p, r = scorer.score(truth, kept)
    print()
    print(f"held-out ({folds} folds by site)  F1 {f1:.3f}  precision {p:.3f}  recall {r:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
