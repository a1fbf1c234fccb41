"""Stage 1, files: the PATHs a user typed → the job's log files, each read as blocks of whole lines.

`discovery` walks and sniffs, `jobroots` tells which run directory each log belongs to, `reader`
streams one file whatever its encoding, compression or state. Nothing here knows what a line means.
"""
