"""slacheck's version, in a module of its own so anything can read it without importing the
package's public API (``slacheck/__init__.py``)."""

__version__ = "0.1.0"
