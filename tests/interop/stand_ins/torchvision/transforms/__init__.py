"""Stand-in ``torchvision.transforms`` (see the package docstring)."""
