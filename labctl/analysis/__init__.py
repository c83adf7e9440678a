"""Analytics over recorded runs (pandas): yield, process capability, failure Pareto, drift and
trends, and the comparison of two populations.

Every function takes the frames built from the typed run record (``labctl.report.record``):
the measurements frame (one row per measurement) and the runs frame (one row per run). They
compute; they never read the store and never print. ``labctl stats`` shows them in the
terminal and the HTML report renders them.
"""
