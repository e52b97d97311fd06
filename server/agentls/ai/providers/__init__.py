"""Model providers. Each one turns a provider's API into an :class:`AssistantMessageEventStream`."""
