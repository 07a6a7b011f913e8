"""Shared rich consoles: tables and progress go to stderr so stdout stays machine-readable."""

from rich.console import Console

stderr = Console(stderr=True)
stdout = Console()
