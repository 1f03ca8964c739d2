"""AWS Lambda handlers that aistack components deploy; each module is shipped on its own."""
