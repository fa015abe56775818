"""Resource allocators: whether a CTA fits on an SM and where its state lives."""
