"""mmtwin: a deterministic digital twin of the Linux physical memory manager."""

from mmtwin._core import __version__  # noqa: F401
