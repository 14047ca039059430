# A NiFi 2 Python RecordTransform, written as for NiFi (nifi-python-extensions' style).
from nifiapi.properties import PropertyDescriptor, StandardValidators
from nifiapi.recordtransform import RecordTransform, RecordTransformResult
from nifiapi.relationship import Relationship


class PartitionByColor(RecordTransform):
    class Java:
        implements = ["org.apache.nifi.python.processor.RecordTransform"]

    class ProcessorDetails:
        version = "0.0.1-SNAPSHOT"
        description = "Partitions records by color, drops those marked skip, upper-cases names."
        tags = ["record", "partition"]

    REL_SKIPPED = Relationship(name="skipped", description="Records whose name is skip")
    REL_SUCCESS = Relationship(name="success", description="Transformed records")

    def __init__(self, **kwargs):
        self.suffix = PropertyDescriptor(
            name="Name Suffix",
            description="Appended to every name",
            required=False,
            default_value="",
            validators=[StandardValidators.ALWAYS_VALID],
        )

    def getPropertyDescriptors(self):
        return [self.suffix]

    def getRelationships(self):
        return [self.REL_SUCCESS, self.REL_SKIPPED]

    def transform(self, context, record, schema, attributemap):
        if record["name"] == "drop":
            return RecordTransformResult(record=None)
        if record["name"] == "skip":
            return RecordTransformResult(record=record, relationship="skipped")
        if record["name"] == "boom":
            msg = "boom"
            raise ValueError(msg)
        suffix = context.getProperty(self.suffix.name).getValue() or ""
        record["name"] = record["name"].upper() + suffix
        record["source"] = attributemap.getAttribute("filename")
        return RecordTransformResult(
            record=record, relationship="success", partition={"color": record["color"]}
        )
