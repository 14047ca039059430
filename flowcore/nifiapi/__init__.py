"""NiFi 2's Python processor API (``nifiapi``), for NiFi processor files to run unchanged.

NiFi steers Python users to processors written against ``nifiapi`` (``FlowFileTransform``,
``FlowFileSource``, ``PropertyDescriptor`` ...), run in a Python process beside the JVM and
called over Py4J. flowcore runs Python natively, so this package keeps NiFi's module, class and
method names with pure-Python bodies, and :mod:`nifiapi._adapter` makes each NiFi processor class
a flowcore :class:`~flowcore.processor.Processor`; :mod:`nifiapi._loader` scans directories for
them, as NiFi scans ``nifi.python.extensions.source.directory``.

Import it as ``nifiapi`` (``from nifiapi.flowfiletransform import FlowFileTransform``), never as
``flowcore.nifiapi``: the code lives in ``flowcore/nifiapi`` but is one top-level package, found
by a wheel's ``package-dir`` mapping, an editable install's, or the finder ``import flowcore``
registers (see ``flowcore._NiFiApiFinder``).
"""

if __name__ != "nifiapi":  # a second copy would make every class twice
    msg = f"import NiFi's Python API as 'nifiapi', not as {__name__!r}"
    raise ImportError(msg)
