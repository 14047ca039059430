"""Writing your own processor: define it, test it with TestRunner, use it in a flow on Spark.

``MaskClientAddresses`` replaces the last octet of every IPv4 address in a FlowFile's content
(``10.0.3.17`` -> ``10.0.3.x``), a typical privacy step before logs leave a network. It is a
:class:`~flowcore.FlowFileTransform`: declare properties and relationships, implement
``transform``. flowcore gives it NiFi's property handling, Expression Language, provenance
(CONTENT_MODIFIED) and failure routing.

Installed packages can make processors available by name through the ``flowcore.processors``
entry-point group (``flowcore processors`` then lists them)::

    [project.entry-points."flowcore.processors"]
    MaskClientAddresses = "mypackage.mask:MaskClientAddresses"

Run ``python examples/custom_processor.py [WORKDIR]``: it runs the tests below, then the flow.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from flowcore import (
    ExpressionLanguageScope,
    Flow,
    FlowFileTransform,
    PropertyDescriptor,
    Relationship,
    TransformResult,
)
from flowcore.testing import TestRunner
from flowcore.validators import NON_EMPTY_VALIDATOR
from processors import GetFile, PutFile

IPV4 = re.compile(rb"\b(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\b")


class MaskClientAddresses(FlowFileTransform):
    """Masks the last octet of IPv4 addresses in the content."""

    MASK = PropertyDescriptor(
        "Mask",
        description="What replaces the last octet; Expression Language sees the FlowFile",
        required=True,
        default="x",
        validators=(NON_EMPTY_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    property_descriptors = (MASK,)
    relationships = (
        Relationship("success", "Content with addresses masked"),
        Relationship("failure", "FlowFiles whose content could not be read"),
    )
    writes_attributes = {"masked.count": "How many addresses were masked"}

    def transform(self, context, flowfile):
        mask = context.get_property(self.MASK).evaluate_attribute_expressions(flowfile.attributes)
        replacement = rb"\1.\2.\3." + mask.value.encode()
        masked, count = IPV4.subn(replacement, flowfile.read())
        return TransformResult(contents=masked, attributes={"masked.count": str(count)})


# --- its tests (run by pytest through tests/examples, and by main below) --------------------


def test_masks_every_address():
    """Each IPv4 address loses its last octet; the count is recorded."""
    runner = TestRunner(MaskClientAddresses())
    runner.enqueue(b"10.0.3.17 GET /\n192.168.1.200 POST /login\n")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals(b"10.0.3.x GET /\n192.168.1.x POST /login\n")
    out.assert_attribute_equals("masked.count", "2")
    assert [e.event_type.name for e in runner.provenance_events] == ["CONTENT_MODIFIED"]


def test_mask_uses_expression_language():
    """The mask can come from an attribute."""
    runner = TestRunner(MaskClientAddresses(mask="${site}"))
    runner.enqueue(b"10.1.2.3", {"site": "eu"})
    runner.run()
    runner.flowfiles_for("success")[0].assert_content_equals(b"10.1.2.eu")


def test_empty_mask_is_invalid():
    """An empty mask is rejected before anything runs."""
    runner = TestRunner(MaskClientAddresses)
    runner.set_property("Mask", "")
    runner.assert_not_valid()


# --- in a flow ----------------------------------------------------------------------------------


def build_flow(data: Path) -> Flow:
    """GetFile -> MaskClientAddresses -> PutFile over *data*."""
    flow = Flow("mask-addresses")
    get = flow.add(GetFile(input_directory=str(data / "in"), keep_source_file=True), name="get")
    mask = flow.add(MaskClientAddresses(), name="mask")
    put = flow.add(
        PutFile(directory=str(data / "out"), conflict_resolution_strategy="replace"), name="put"
    )
    flow.connect(get, mask)
    flow.connect(mask, put, "success")
    flow.auto_terminate(mask, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def main(argv: list[str] | None = None) -> None:
    """Run the tests, then the flow on the chosen runner."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", nargs="?", default="custom-processor-data")
    parser.add_argument("--runner", choices=("direct", "spark"), default="spark")
    args = parser.parse_args(argv)
    for test in (
        test_masks_every_address,
        test_mask_uses_expression_language,
        test_empty_mask_is_invalid,
    ):
        test()
        print(f"ok  {test.__name__}: {test.__doc__}")
    workdir = Path(args.workdir).resolve()
    if workdir.exists():
        shutil.rmtree(workdir)
    (workdir / "in").mkdir(parents=True)
    for number in range(3):
        lines = [f"10.0.{number}.{i} - - GET /page/{i}\n" for i in range(1, 200)]
        (workdir / "in" / f"access-{number}.log").write_text("".join(lines))
    result = build_flow(workdir).run(args.runner, repository=workdir / ".flowcore")
    print(result.summary())
    sample = (workdir / "out" / "access-0.log").read_text().splitlines()[0]
    print("first masked line:", sample)
    if re.search(r"\d+\.\d+\.\d+\.\d+", (workdir / "out" / "access-1.log").read_text()):
        sys.exit("an address was left unmasked")


if __name__ == "__main__":
    main()
