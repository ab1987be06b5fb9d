"""Token estimators: the seed heuristic (exact), and the calibrated and real-tokenizer ones."""
