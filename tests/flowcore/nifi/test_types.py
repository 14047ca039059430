"""Tests for flowcore.nifi.types: NiFi's component types and bundles."""

from flowcore.nifi.types import FLOWCORE_BUNDLE, NIFI_PROCESSORS, nifi_type_of, simple_name
from processors import BUILTIN_PROCESSORS


def test_every_nifi_builtin_has_its_nifi_type() -> None:
    """Each built-in processor that is NiFi's exports under NiFi's class and standard NAR."""
    split = nifi_type_of("SplitText")
    assert split.type == "org.apache.nifi.processors.standard.SplitText"
    assert split.bundle.artifact == "nifi-standard-nar"
    update = nifi_type_of("UpdateAttribute")
    assert update.type == "org.apache.nifi.processors.attributes.UpdateAttribute"
    assert update.bundle.artifact == "nifi-update-attribute-nar"
    flowcore_own = {"FileSplitter", "GetDataFrame", "PutDataset"}
    assert set(BUILTIN_PROCESSORS) - flowcore_own <= set(NIFI_PROCESSORS)


def test_flowcore_processors_export_under_flowcores_bundle() -> None:
    """A processor NiFi lacks is named under flowcore's bundle, so NiFi shows it as missing."""
    own = nifi_type_of("FileSplitter")
    assert own.bundle == FLOWCORE_BUNDLE
    assert simple_name(own.type) == "FileSplitter"
