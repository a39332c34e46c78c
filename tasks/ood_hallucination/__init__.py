"""ood_hallucination task package (see README.md)."""
