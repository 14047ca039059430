# Declares a dependency nobody has installed: flowcore reports it instead of importing this file.
import flowcore_sample_missing_package  # noqa: F401 - the point: it is not installed

from nifiapi.flowfiletransform import FlowFileTransform, FlowFileTransformResult


class NeedsMissingPackage(FlowFileTransform):
    class Java:
        implements = ['org.apache.nifi.python.processor.FlowFileTransform']

    class ProcessorDetails:
        version = '0.0.1-SNAPSHOT'
        dependencies = ['flowcore-sample-missing-package>=1.0']

    def __init__(self, **kwargs):
        pass

    def transform(self, context, flowFile):
        return FlowFileTransformResult(relationship='success')
