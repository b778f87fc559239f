"""The package version: the one place it is written. `pyproject.toml` reads it at build time
(`[tool.setuptools.dynamic]`), and `iii_directory.__version__` imports it, so a start-up never
reads the installed distribution's metadata (`importlib.metadata` scans site-packages: ~80 ms
of `serve` before it connected)."""

__version__ = "0.1.0"
