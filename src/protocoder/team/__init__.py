"""A team's review: who is in it (:mod:`.members`, the committed ``team.yaml``), how they sign
in (:mod:`.secrets`, hashed under ``.protocoder/``), and who codes what and how far they are
(:mod:`.progress`). The core never imports Textual; ``protocoder serve`` uses these."""
