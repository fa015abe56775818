"""Monitors: observe counters over time."""
