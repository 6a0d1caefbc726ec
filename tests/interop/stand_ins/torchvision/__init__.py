"""A stand-in for torchvision, used only when the real one cannot be imported.

PyPI's torchvision wheels do not load next to the pinned CPU build of torch (``operator
torchvision::nms does not exist``). LeRobot's robot classes import
``torchvision.transforms.functional`` at module level for an image-cropping processor step
that the motor drivers and followers never call. This package lets them import; any use of
it raises, so nothing can silently pass through it.
"""
