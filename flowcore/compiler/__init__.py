"""The compiler: a flow definition cut into stages (:mod:`.stages`), and the plan (:mod:`.plan`)."""
