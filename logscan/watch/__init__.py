"""Following one running job's Worker logs: each new finding as soon as the logs tell, then the end."""
