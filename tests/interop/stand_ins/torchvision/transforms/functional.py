"""Stand-in ``torchvision.transforms.functional``: every function raises."""


def __getattr__(name: str):
    def unavailable(*args, **kwargs):
        raise RuntimeError(f"torchvision.transforms.functional.{name} is not available here")

    return unavailable
