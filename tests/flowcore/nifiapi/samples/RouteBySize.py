# Routes to relationships of its own, as NiFi's RouteFlowFile test extension does.
from nifiapi.flowfiletransform import FlowFileTransform, FlowFileTransformResult
from nifiapi.properties import DataUnit, PropertyDescriptor, StandardValidators
from nifiapi.relationship import Relationship


class RouteBySize(FlowFileTransform):
    class Java:
        implements = ['org.apache.nifi.python.processor.FlowFileTransform']

    class ProcessorDetails:
        version = '0.0.1-SNAPSHOT'
        description = "Routes a FlowFile to 'small' or 'large' by its size."

    REL_SMALL = Relationship(name='small', description='FlowFiles up to the threshold')
    REL_LARGE = Relationship(name='large', description='FlowFiles over the threshold')

    def __init__(self, jvm):
        self.threshold = PropertyDescriptor(
            name='Size Threshold',
            description='FlowFiles larger than this are large.',
            required=True,
            default_value='10 B',
            validators=[StandardValidators.DATA_SIZE_VALIDATOR],
        )

    def getPropertyDescriptors(self):
        return [self.threshold]

    def getRelationships(self):
        return [self.REL_SMALL, self.REL_LARGE]

    def transform(self, context, flowFile):
        limit = context.getProperty(self.threshold.name).asDataSize(DataUnit.B)
        if flowFile.getSize() > limit:
            return FlowFileTransformResult(relationship='large')
        return FlowFileTransformResult(relationship='small', attributes={'size.class': 'small'})
