"""The engine wire protocol: frames, the connection, reattach, invocations. No directory
knowledge at all."""
