# NiFi's Python Developer's Guide's StateManager example: a counter kept in the processor's state.
from nifiapi.componentstate import Scope, StateException
from nifiapi.flowfilesource import FlowFileSource, FlowFileSourceResult


class CountingSource(FlowFileSource):
    class Java:
        implements = ['org.apache.nifi.python.processor.FlowFileSource']

    class ProcessorDetails:
        version = '0.0.1-SNAPSHOT'
        description = 'Creates numbered FlowFiles, keeping the count in its state.'
        tags = ['test', 'python', 'source', 'state']

    def __init__(self, **kwargs):
        pass

    def create(self, context):
        try:
            old_value = int(context.getStateManager().getState(Scope.CLUSTER).get('FlowFileNumber') or '0')
        except StateException as e:
            self.logger.warn('Failed to read processor state. ' + str(e))
            old_value = 0
        new_state = {'FlowFileNumber': str(old_value + 1)}
        context.getStateManager().setState(new_state, Scope.CLUSTER)
        return FlowFileSourceResult(relationship='success', attributes=new_state, contents=None)
