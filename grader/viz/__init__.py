"""Figures the lessons draw (matplotlib), one module per lesson."""
