"""Helpers for the notebooks people open in JupyterLab: ``explore`` (widgets around the package's
calls, for ``interactive = True``) and ``workshop`` (the workshop notebook's answers, computed)."""
