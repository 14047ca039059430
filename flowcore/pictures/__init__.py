"""Pictures of flows and lineage: a model-to-graph step, then one small renderer per format.

A flow (:mod:`~flowcore.pictures.flow_picture`) or a FlowFile's lineage
(:mod:`~flowcore.pictures.lineage_picture`) becomes a :class:`~flowcore.pictures.model.Picture`:
nodes, edges with labels and notes, and clusters (a flow's stages). The renderers then only
read pictures, so ``flowcore explain`` and ``flowcore provenance lineage`` draw alike:

- :mod:`~flowcore.pictures.text`: a listing per cluster (flows) or a tree in time order
  (lineage), for terminals;
- :mod:`~flowcore.pictures.dot`: Graphviz DOT text, and SVG laid out by Graphviz's ``dot``
  program (docs/operations.md, "Pictures", says why Graphviz);
- :mod:`~flowcore.pictures.mermaid`: a Mermaid flowchart, for Markdown pages;
- :mod:`~flowcore.pictures.render`: the format names and :func:`~flowcore.pictures.render.render`,
  which picks one.
"""
