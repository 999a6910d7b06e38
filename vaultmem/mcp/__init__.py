"""The MCP bridge: assistants' tools over the daemon's socket."""
