"""loom.backends.mps: Apple's Metal devices. loom has no Metal plugin, so there is never one."""


def is_available():
    return False


def is_built():
    return False
