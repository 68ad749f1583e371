"""tablegen package."""
