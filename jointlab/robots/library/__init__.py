"""Built-in robot files (``*.yaml``)."""
