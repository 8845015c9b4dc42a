"""The Theory page (the bounds): its computations, charts and sentences."""
