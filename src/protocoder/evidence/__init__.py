"""Evidence you can check: pinned source snapshots and the quotes that anchor codes to them.

* :mod:`.snapshots` — content-addressed copies of reviewed sources under ``sources/``
  (``<sha256>.<ext>``), their media types, and the extracted-text sidecar
  (``<sha256>.text.json``) holding page and heading positions.
* :mod:`.extract` — PDF, HTML, Markdown and plain text to text with positions, run in a
  child process with bounded time and memory, so that a hostile file ends in a one-line
  error: the model (``structure``), text cleaning (``cleaning``), the raw-offset builder
  (``layout``), one reader per kind (``pdf``, ``html``, ``markdown``, ``plain``), the choice
  by media type (``dispatch``) and the child process (``bounded``, running ``_worker``).
* :mod:`.locate` — normalised search (whitespace, line-break hyphenation, ligatures,
  typographic quotes and dashes) returning spans in the extracted text, and the closest
  passage when a quote is not found.
* :mod:`.search` — candidate passages for a rubric field: passages of a snapshot
  (``passages``), the words and a field's query (``query``), BM25 ranking (``ranking``), a
  protocol's index cached under ``.protocoder/find/`` (``index``), the entry points
  (``find``: ``find_passages``, ``search_field``).
* :mod:`.quotes` — checking every quote against its snapshot (``validate``), drift when a
  source changes, and the quote operations behind ``protocoder quote``: a quote's anchor
  (``anchors``), the closest passage offered (``suggestions``), a quote found in a snapshot
  (``locating``), ``verification``, ``editing``, ``drift`` and the quotes of the view (``view``).
* :mod:`.sources` — ``protocoder source add / list / update / check / remove``.
* :mod:`.fetch` — a URL read within size and time limits (a GitHub file at its branch's commit,
  an arXiv paper's PDF), with what the server said about it.
* :mod:`.repository` — files of a git repository at a commit, read with the ``git`` program.
* :mod:`.overlap` — evidence agreement on quotes (character-span overlap).

Nothing here imports Textual or click.
"""
