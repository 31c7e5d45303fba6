"""The labs' experiments: one package per lab, each producing the frozen results of one trace.

Each package's top-level producer (named in its trace's declaration in ``tracefile.schemas``)
runs every experiment of the lab with fixed seeds and returns one frozen results object.
``grid`` trains a grid of runs (settings by seeds) on every core, each cell cached on its own.
"""
