"""The driver: schedules stage runs, commits their results, finishes sinks' effects."""
