"""The lessons: the six guided experiments and their worksheet."""
