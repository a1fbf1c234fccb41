"""Stage 5, diagnose: findings → the one Diagnosis every renderer reads. Which finding is the root
cause, the verdict, where each finding and Worker got (stage marks), stable finding fingerprints,
and `pipeline`, the one way from PATHs to a Diagnosis."""
