"""protocoder: documentation reviews of agent-evaluation benchmarks.

The core library (everything outside ``protocoder.tui`` and ``protocoder.cli``) never
imports Textual or click, so notebooks and scripts can use it without a terminal UI.
"""

__version__ = "0.1.0"
