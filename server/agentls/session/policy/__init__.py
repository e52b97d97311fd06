"""A session's policy: permissions and their presets, project trust, and the models it may use."""
