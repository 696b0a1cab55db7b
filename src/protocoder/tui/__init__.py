"""The coding app (Textual). Only this package imports Textual; nothing in the core imports it."""
