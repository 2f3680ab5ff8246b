"""The metering model: the contract read against the spans once, for every consumer."""
