"""Activity-based energy model: per-node energy tables (tables/*.toml, every entry
sourced), the activity of a launch derived from the timing model's counters
(activity.py), and counts x table -> EnergyStats (model.py). See docs/energy.md."""
