"""Files other tools read: the REFI-QDA exchange formats (:mod:`.refiqda`)."""
