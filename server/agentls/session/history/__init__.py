"""The session's history: its JSONL file (entries, header, lines, writer, store), its tree and
transcript, and rewinding the files its runs changed."""
