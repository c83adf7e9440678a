"""The engine: runs a plan on a station and publishes events to subscribers."""
