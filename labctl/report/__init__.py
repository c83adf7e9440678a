"""Reports for quality teams: exporters are callables that take a run record."""
