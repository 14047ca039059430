r"""The processor test harness, with NiFi's ``TestRunner`` API and mock semantics.

::

    runner = TestRunner(SplitText())
    runner.set_property("Line Split Count", "1")
    runner.enqueue(b"a\\nb")
    runner.run()
    runner.assert_transfer_count("splits", 2)
    runner.flowfiles_for("splits")[0].assert_content_equals("a")

``TestRunner(processor, batches=True)`` runs a processor's batch forms as the engine does, and
``runner.assert_batch_form_agrees()`` checks them against the one-by-one form.
"""

from flowcore.testing._batches import BatchUse
from flowcore.testing._mock_flowfile import MockFlowFile
from flowcore.testing._runner import TestRunner

__all__ = ["BatchUse", "MockFlowFile", "TestRunner"]
