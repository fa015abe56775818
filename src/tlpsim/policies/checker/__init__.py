"""Execution checkers: redundant execution for error detection."""
