"""The DP-OWL page: its computations, charts, sentences, verdict and panels."""
