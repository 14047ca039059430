# A NiFi 2 Python processor, written as for NiFi: flowcore runs this file unchanged.
from nifiapi.flowfiletransform import FlowFileTransform, FlowFileTransformResult
from nifiapi.properties import ExpressionLanguageScope, PropertyDescriptor, StandardValidators


class UpperCase(FlowFileTransform):
    class Java:
        implements = ['org.apache.nifi.python.processor.FlowFileTransform']

    class ProcessorDetails:
        version = '0.0.1-SNAPSHOT'
        description = 'Upper-cases the text of a FlowFile and tags it with an attribute.'
        tags = ['text', 'case', 'python']

    ATTRIBUTE_NAME = PropertyDescriptor(
        name='Attribute Name',
        description='The attribute to set on each FlowFile.',
        required=True,
        default_value='upper.by',
        validators=[StandardValidators.NON_EMPTY_VALIDATOR],
    )
    ATTRIBUTE_VALUE = PropertyDescriptor(
        name='Attribute Value',
        description='Its value; Expression Language over the FlowFile\'s attributes.',
        required=True,
        default_value='${filename}',
        expression_language_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )

    def __init__(self, **kwargs):
        super().__init__()
        self.descriptors = [self.ATTRIBUTE_NAME, self.ATTRIBUTE_VALUE]

    def getPropertyDescriptors(self):
        return self.descriptors

    def onScheduled(self, context):
        self.logger.info('UpperCase {} scheduled', context.getName())

    def transform(self, context, flowFile):
        text = flowFile.getContentsAsBytes().decode('utf-8')  # not UTF-8: raises, goes to failure
        name = context.getProperty(self.ATTRIBUTE_NAME).getValue()
        value = context.getProperty(self.ATTRIBUTE_VALUE).evaluateAttributeExpressions(flowFile).getValue()
        return FlowFileTransformResult(relationship='success', attributes={name: value, 'size.before': flowFile.getSize()}, contents=text.upper())
