"""The ProcessSession (:mod:`.process_session`) and what it needs from its host (:mod:`.host`)."""
