"""slacheck: check AI-inference SLA contracts against your own agent traces."""

__version__ = "0.1.0"
