"""Stage 3, model: events → per-Worker facts → the job model that findings read; who failed, how,
when, and whether it was only a consequence (`failures`)."""
