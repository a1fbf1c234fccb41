"""Stage 2, scan: log lines → events. Prefixes stripped, candidate lines found by their exact
patterns, then interpreted into the plain records of `events`; big files surveyed in a worker pool.

Nothing here knows a rule's verdict or an output format: it reports what the lines say.
"""
