"""Command lines: `gw` runs components, `gwctl` inspects and operates an installation.

Environment variables are read here (and in `up.py`) and passed down typed: nothing below
the command line reads the environment.
"""
