"""Background service install: systemd user units and launchd agents."""
