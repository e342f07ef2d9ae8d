"""The model layer: provider resolution, per-function routing, the OpenAI-compatible client,
the offline heuristic reasoner, and token/cost accounting. Only the reasoning engine calls it."""
