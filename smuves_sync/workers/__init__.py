"""Worker runner, fetch and export handlers, scheduler."""
