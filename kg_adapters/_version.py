"""The package version, in a module of its own so that any module (e.g. the HTTP transport's
User-Agent) can read it without importing the package root and everything it pulls in."""

__version__ = "0.1.0"
