# A processor in a package: it imports its sibling module by name, as in NiFi.
import word_util
from nifiapi.flowfiletransform import FlowFileTransform, FlowFileTransformResult


class CountWords(FlowFileTransform):
    class Java:
        implements = ['org.apache.nifi.python.processor.FlowFileTransform']

    class ProcessorDetails:
        version = '0.0.1-SNAPSHOT'

    def __init__(self, jvm):
        pass

    def transform(self, context, flowFile):
        words = word_util.count_words(flowFile.getContentsAsBytes().decode())
        return FlowFileTransformResult(relationship='success', attributes={'word.count': str(words)})
