"""The Qt-free application layer: commands, the CLI, settings."""
