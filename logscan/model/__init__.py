"""Stage 3, model: events → Workers → the job model that findings read; who failed, how,
when, and whether it was only a consequence (`failures`)."""
