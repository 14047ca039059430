# A NiFi 2 FlowFileSource: makes one FlowFile each time it runs.
from nifiapi.flowfilesource import FlowFileSource, FlowFileSourceResult
from nifiapi.properties import PropertyDescriptor
from nifiapi.relationship import Relationship


class CreateGreeting(FlowFileSource):
    class Java:
        implements = ['org.apache.nifi.python.processor.FlowFileSource']

    class ProcessorDetails:
        version = '0.0.1-SNAPSHOT'
        description = 'Creates FlowFiles holding a greeting.'
        tags = ['text', 'source', 'python']

    GREETING = PropertyDescriptor(
        name='Greeting',
        description='The contents of each FlowFile.',
        required=True,
        default_value='Hello World!',
    )
    REL_MULTILINE = Relationship(name='multiline', description='Greetings of several lines.')

    def __init__(self, **kwargs):
        pass

    def getPropertyDescriptors(self):
        return [self.GREETING]

    def getRelationships(self):
        return [self.REL_MULTILINE]

    def create(self, context):
        text = context.getProperty(self.GREETING).getValue()
        relationship = 'multiline' if '\n' in text else 'success'
        return FlowFileSourceResult(relationship=relationship, attributes={'greeting': 'yes'}, contents=text)
