"""aistack."""
