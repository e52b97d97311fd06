"""The model providers, tested with their real client libraries against local mock servers."""
