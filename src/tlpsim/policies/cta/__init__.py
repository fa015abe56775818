"""CTA schedulers: which CTA goes to which SM, and when (one module per policy)."""
