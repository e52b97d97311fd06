"""What a session tells the model besides the transcript: the system prompt, project instructions
(AGENTS.md), skills and prompt templates, and reading the files they come from."""
