"""Operand storage: register file organisations (one module per mechanism)."""
