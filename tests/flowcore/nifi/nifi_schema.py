"""The JSON field names of NiFi's versioned flow classes, for checking flowcore's exports.

Copied from NiFi's sources: apache/nifi-api at commit d7f7713a70562ca37b22e84110344c3d4e496e0c
(the NiFi 2.0 API), ``src/main/java/org/apache/nifi/flow/*.java`` and
``src/main/java/org/apache/nifi/registry/flow/RegisteredFlowSnapshot.java``: each class's
getters as Jackson names them (``getGroupIdentifier`` -> ``groupIdentifier``, ``getzIndex`` ->
``zIndex``), superclasses' fields included. ``REQUIRED`` lists, per class, the fields NiFi's
``VersionedComponentFlowMapper`` (apache/nifi at 60319e26f8549a6965d29feaf7c8103294882732,
``nifi-framework-bundle/nifi-framework/nifi-framework-components/src/main/java/org/apache/nifi/
registry/flow/mapping/VersionedComponentFlowMapper.java``) always sets for a download
(``mapInstanceIdentifiers(false)``, so never ``instanceIdentifier``).
"""

from __future__ import annotations

# VersionedComponent.java
_COMPONENT = {
    "identifier",
    "instanceIdentifier",
    "groupIdentifier",
    "name",
    "comments",
    "position",
    "componentType",
}
# VersionedConfigurableExtension.java (VersionedExtensionComponent, VersionedConfigurableComponent)
_EXTENSION = _COMPONENT | {"type", "bundle", "properties", "propertyDescriptors"}

FIELDS: dict[str, set[str]] = {
    # registry/flow/RegisteredFlowSnapshot.java
    "RegisteredFlowSnapshot": {
        "snapshotMetadata",
        "flow",
        "bucket",
        "flowContents",
        "externalControllerServices",
        "parameterContexts",
        "flowEncodingVersion",
        "parameterProviders",
        "latest",
    },
    # VersionedProcessGroup.java
    "VersionedProcessGroup": _COMPONENT
    | {
        "processGroups",
        "remoteProcessGroups",
        "processors",
        "inputPorts",
        "outputPorts",
        "connections",
        "labels",
        "funnels",
        "controllerServices",
        "versionedFlowCoordinates",
        "parameterContextName",
        "flowFileConcurrency",
        "flowFileOutboundPolicy",
        "defaultFlowFileExpiration",
        "defaultBackPressureObjectThreshold",
        "defaultBackPressureDataSizeThreshold",
        "logFileSuffix",
        "scheduledState",
        "executionEngine",
        "maxConcurrentTasks",
        "statelessFlowTimeout",
    },
    # VersionedProcessor.java
    "VersionedProcessor": _EXTENSION
    | {
        "style",
        "annotationData",
        "schedulingPeriod",
        "schedulingStrategy",
        "executionNode",
        "penaltyDuration",
        "yieldDuration",
        "bulletinLevel",
        "runDurationMillis",
        "concurrentlySchedulableTaskCount",
        "autoTerminatedRelationships",
        "scheduledState",
        "retryCount",
        "retriedRelationships",
        "backoffMechanism",
        "maxBackoffPeriod",
    },
    # VersionedControllerService.java (2.x: extends VersionedConfigurableExtension)
    "VersionedControllerService": _EXTENSION
    | {"controllerServiceApis", "annotationData", "scheduledState", "bulletinLevel"},
    # ControllerServiceAPI.java
    "ControllerServiceAPI": {"type", "bundle"},
    # VersionedPropertyDescriptor.java
    "VersionedPropertyDescriptor": {
        "name",
        "displayName",
        "identifiesControllerService",
        "sensitive",
        "dynamic",
        "resourceDefinition",
    },
    # VersionedFunnel.java
    "VersionedFunnel": set(_COMPONENT),
    # VersionedConnection.java
    "VersionedConnection": _COMPONENT
    | {
        "source",
        "destination",
        "labelIndex",
        "zIndex",
        "selectedRelationships",
        "backPressureObjectThreshold",
        "backPressureDataSizeThreshold",
        "flowFileExpiration",
        "prioritizers",
        "bends",
        "loadBalanceStrategy",
        "partitioningAttribute",
        "loadBalanceCompression",
    },
    # ConnectableComponent.java
    "ConnectableComponent": {"id", "instanceIdentifier", "type", "groupId", "name", "comments"},
    # VersionedParameterContext.java
    "VersionedParameterContext": _COMPONENT
    | {
        "description",
        "parameters",
        "inheritedParameterContexts",
        "parameterProvider",
        "parameterGroupName",
        "synchronized",
    },
    # VersionedParameter.java
    "VersionedParameter": {
        "name",
        "description",
        "sensitive",
        "provided",
        "value",
        "referencedAssets",
    },
    # Position.java, Bundle.java
    "Position": {"x", "y"},
    "Bundle": {"group", "artifact", "version"},
}

REQUIRED: dict[str, set[str]] = {
    # StandardNiFiServiceFacade.buildFlowSnapshot sets these on a download.
    "RegisteredFlowSnapshot": {
        "flowContents",
        "externalControllerServices",
        "parameterContexts",
        "flowEncodingVersion",
        "parameterProviders",
        "latest",
    },
    # mapGroup: a download's top group has no groupIdentifier (its parent is not exported).
    "VersionedProcessGroup": {
        "identifier",
        "name",
        "position",
        "processGroups",
        "remoteProcessGroups",
        "processors",
        "inputPorts",
        "outputPorts",
        "connections",
        "labels",
        "funnels",
        "controllerServices",
        "flowFileConcurrency",
        "flowFileOutboundPolicy",
        "defaultFlowFileExpiration",
        "defaultBackPressureObjectThreshold",
        "defaultBackPressureDataSizeThreshold",
        "executionEngine",
        "componentType",
    },
    # mapControllerService
    "VersionedControllerService": {
        "identifier",
        "groupIdentifier",
        "name",
        "type",
        "bundle",
        "properties",
        "propertyDescriptors",
        "controllerServiceApis",
        "scheduledState",
        "componentType",
    },
    "ControllerServiceAPI": {"type", "bundle"},
    # mapProcessor
    "VersionedProcessor": {
        "identifier",
        "groupIdentifier",
        "type",
        "autoTerminatedRelationships",
        "bulletinLevel",
        "bundle",
        "concurrentlySchedulableTaskCount",
        "executionNode",
        "name",
        "penaltyDuration",
        "position",
        "properties",
        "propertyDescriptors",
        "runDurationMillis",
        "schedulingPeriod",
        "schedulingStrategy",
        "style",
        "yieldDuration",
        "scheduledState",
        "retryCount",
        "retriedRelationships",
        "backoffMechanism",
        "maxBackoffPeriod",
        "componentType",
    },
    # mapPropertyDescriptors
    "VersionedPropertyDescriptor": {
        "name",
        "displayName",
        "identifiesControllerService",
        "sensitive",
        "dynamic",
    },
    # mapFunnel
    "VersionedFunnel": {"identifier", "groupIdentifier", "position", "componentType"},
    # mapConnection
    "VersionedConnection": {
        "identifier",
        "groupIdentifier",
        "name",
        "source",
        "destination",
        "labelIndex",
        "zIndex",
        "selectedRelationships",
        "backPressureObjectThreshold",
        "backPressureDataSizeThreshold",
        "flowFileExpiration",
        "prioritizers",
        "bends",
        "loadBalanceStrategy",
        "loadBalanceCompression",
        "componentType",
    },
    # mapConnectable
    "ConnectableComponent": {"id", "type", "groupId", "name"},
    # mapParameterContext
    "VersionedParameterContext": {
        "identifier",
        "name",
        "parameters",
        "inheritedParameterContexts",
        "componentType",
    },
    # mapParameter
    "VersionedParameter": {"name", "sensitive", "provided"},
    "Position": {"x", "y"},
    "Bundle": {"group", "artifact", "version"},
}

#: Enumerations' values: ComponentType.java, ScheduledState.java, ConnectableComponentType.java,
#: ExecutionEngine.java.
COMPONENT_TYPES = {
    "CONNECTION",
    "PROCESSOR",
    "PROCESS_GROUP",
    "REMOTE_PROCESS_GROUP",
    "INPUT_PORT",
    "OUTPUT_PORT",
    "REMOTE_INPUT_PORT",
    "REMOTE_OUTPUT_PORT",
    "FUNNEL",
    "LABEL",
    "CONTROLLER_SERVICE",
    "REPORTING_TASK",
    "FLOW_ANALYSIS_RULE",
    "PARAMETER_CONTEXT",
    "PARAMETER_PROVIDER",
    "FLOW_REGISTRY_CLIENT",
}
SCHEDULED_STATES = {"ENABLED", "DISABLED", "RUNNING"}
CONNECTABLE_TYPES = {
    "PROCESSOR",
    "REMOTE_INPUT_PORT",
    "REMOTE_OUTPUT_PORT",
    "INPUT_PORT",
    "OUTPUT_PORT",
    "FUNNEL",
}
EXECUTION_ENGINES = {"STANDARD", "STATELESS", "INHERITED"}


def schema_problems(document: dict) -> list[str]:
    """Every key of an exported flow definition that NiFi's classes lack, or required and missing.

    Walks the document as NiFi's Jackson would read it, class by class, and checks the
    enumerations' values; returns one line per problem, with the path to it.
    """
    problems: list[str] = []

    def check(value: dict, cls: str, path: str) -> None:
        if not isinstance(value, dict):
            problems.append(f"{path}: a {cls} must be an object, got {type(value).__name__}")
            return
        for key in sorted(set(value) - FIELDS[cls]):
            problems.append(f"{path}.{key}: {cls} has no field {key!r}")
        for key in sorted(REQUIRED[cls] - set(value)):
            problems.append(f"{path}: {cls} lacks {key!r}")
        if "position" in value:
            check(value["position"], "Position", f"{path}.position")
        if "componentType" in value and value["componentType"] not in COMPONENT_TYPES:
            problems.append(f"{path}.componentType: {value['componentType']!r}")
        if "scheduledState" in value and value["scheduledState"] not in SCHEDULED_STATES:
            problems.append(f"{path}.scheduledState: {value['scheduledState']!r}")

    def group(value: dict, path: str) -> None:
        check(value, "VersionedProcessGroup", path)
        if value.get("executionEngine") not in EXECUTION_ENGINES:
            problems.append(f"{path}.executionEngine: {value.get('executionEngine')!r}")
        for n, processor in enumerate(value.get("processors", ())):
            where = f"{path}.processors[{n}]"
            check(processor, "VersionedProcessor", where)
            check(processor.get("bundle", {}), "Bundle", f"{where}.bundle")
            for name, descriptor in processor.get("propertyDescriptors", {}).items():
                check(descriptor, "VersionedPropertyDescriptor", f"{where}.{name}")
        for n, service in enumerate(value.get("controllerServices", ())):
            where = f"{path}.controllerServices[{n}]"
            check(service, "VersionedControllerService", where)
            check(service.get("bundle", {}), "Bundle", f"{where}.bundle")
            for api in service.get("controllerServiceApis", ()):
                check(api, "ControllerServiceAPI", f"{where}.controllerServiceApis")
            for name, descriptor in service.get("propertyDescriptors", {}).items():
                check(descriptor, "VersionedPropertyDescriptor", f"{where}.{name}")
        for n, funnel in enumerate(value.get("funnels", ())):
            check(funnel, "VersionedFunnel", f"{path}.funnels[{n}]")
        for n, connection in enumerate(value.get("connections", ())):
            where = f"{path}.connections[{n}]"
            check(connection, "VersionedConnection", where)
            for end in ("source", "destination"):
                check(connection.get(end, {}), "ConnectableComponent", f"{where}.{end}")
                if connection.get(end, {}).get("type") not in CONNECTABLE_TYPES:
                    problems.append(f"{where}.{end}.type: {connection[end].get('type')!r}")
            for bend in connection.get("bends", ()):
                check(bend, "Position", f"{where}.bends")
        for n, child in enumerate(value.get("processGroups", ())):
            group(child, f"{path}.processGroups[{n}]")

    check(document, "RegisteredFlowSnapshot", "$")
    group(document.get("flowContents", {}), "$.flowContents")
    for name, context in document.get("parameterContexts", {}).items():
        check(context, "VersionedParameterContext", f"$.parameterContexts[{name!r}]")
        for n, parameter in enumerate(context.get("parameters", ())):
            check(parameter, "VersionedParameter", f"$.parameterContexts[{name!r}][{n}]")
    return problems
