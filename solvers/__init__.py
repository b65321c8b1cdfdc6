"""Solver back-ends: one module per open solver."""
